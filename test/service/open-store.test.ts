import { expect } from "chai";
import { loadConfig, StartupRefused } from "../../platform/config/config.js";
import { registry } from "../../platform/observability/metrics.js";
import { openStore } from "../../store/open-store.js";
import { freePort } from "../kit/free-port.js";
import { captureLogs, type LogLine } from "../kit/log-capture.js";
import { pollUntil } from "../kit/poll.js";
import { sample } from "../kit/promql.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

/** The store's start-up line: which store, and why. */
function storeLine(lines: LogLine[]): LogLine {
  const line = lines.find((l) => l.store !== undefined && l.reason !== undefined);
  expect(line, JSON.stringify(lines)).to.not.equal(undefined);
  return line as LogLine;
}

/**
 * Which store a process opens (RAILGATE_STORE, REDIS_URL), and the line that says so. The "local
 * default" (redis://127.0.0.1:6379 in a deployment) is a throwaway Redis on a free port here, or
 * a free port where nothing answers: no test touches the machine's 6379.
 */
describe("openStore: which store, and why", () => {
  let redis: ThrowawayRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(() => redis.stop());

  async function open(env: Record<string, string>, localUrl: string) {
    const logs = captureLogs("info");
    try {
      const store = await openStore(loadConfig(env), localUrl);
      return { store, line: storeLine(logs.lines()) };
    } finally {
      logs.restore();
    }
  }

  it("auto, REDIS_URL unset: the embedded store, loudly, when nothing answers locally", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const { store, line } = await open({}, nobody);
    await store.close();
    expect(store.kind).to.equal("memory");
    expect(line).to.include({ level: 40, store: "embedded" });
    expect(line.msg).to.match(
      /^using the EMBEDDED IN-MEMORY STORE \(RAILGATE_STORE=auto and neither REDIS_URL nor RAILGATE_REDIS_CLUSTER_NODES is set\): state is lost on exit/,
    );
    expect(line.msg).to.include("Set REDIS_URL for production.");
  });

  it("auto, REDIS_URL unset: a Redis answering at the local default is NOT adopted, and the line says how to use it", async () => {
    const marker = `rg-probe-${Date.now()}`;
    const { store, line } = await open({ RAILGATE_REDIS_PREFIX: marker }, redis.url);
    await store.close();
    expect(store.kind).to.equal("memory");
    expect(line).to.include({ level: 40, store: "embedded", unusedRedis: redis.url });
    expect(line.msg).to.include(
      `A Redis answers at ${redis.url} and is NOT used: set REDIS_URL=${redis.url} (or RAILGATE_STORE=redis) to keep state there.`,
    );
    // Nothing was written to it.
    const client = redis.client();
    try {
      expect(await client.keys(`${marker}*`)).to.deep.equal([]);
    } finally {
      client.disconnect();
    }
  });

  it("RAILGATE_STORE=redis, REDIS_URL unset: Redis at the local default, with its key prefix in the line", async () => {
    const { store, line } = await open(
      { RAILGATE_STORE: "redis", RAILGATE_REDIS_PREFIX: "rg-first" },
      redis.url,
    );
    await store.close();
    expect(store.kind).to.equal("redis");
    expect(line).to.include({
      level: 30,
      store: "redis",
      redis: redis.url,
      prefix: "rg-first",
      reason: "RAILGATE_STORE=redis and REDIS_URL unset: the local default",
    });
    expect(line.msg).to.equal(
      `using the Redis store at ${redis.url} (RAILGATE_STORE=redis and REDIS_URL unset: the local default); every key starts with "rg-first:" (RAILGATE_REDIS_PREFIX)`,
    );
  });

  it("REDIS_URL set: that Redis, and the line says REDIS_URL", async () => {
    const { store, line } = await open({ REDIS_URL: redis.url }, "redis://127.0.0.1:1");
    await store.close();
    expect(store.kind).to.equal("redis");
    expect(line).to.include({ store: "redis", reason: "REDIS_URL", redis: redis.url });
  });

  it("RAILGATE_STORE=redis with no Redis answering: start-up refused, naming the setting and the address", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const failed = await openStore(loadConfig({ RAILGATE_STORE: "redis" }), nobody).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(StartupRefused);
    expect((failed as Error).message).to.equal(
      `Redis at ${nobody} (RAILGATE_STORE=redis and REDIS_URL unset: the local default) is not reachable: start it, correct the address, or set RAILGATE_STORE=embedded for a store that lives and dies with this process`,
    );
  });

  it("refuses to start when an explicitly configured Redis is unreachable", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const failed = await openStore(loadConfig({ REDIS_URL: nobody })).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(StartupRefused);
    expect((failed as Error).message).to.match(/^Redis at .* \(REDIS_URL\) is not reachable/);
  });

  it("a split guardrail or speech process: no embedded store unless RAILGATE_STORE=embedded says so", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const failed = await openStore(loadConfig({}), nobody, "speech").then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(StartupRefused);
    expect((failed as Error).message).to.equal(
      "the speech process has no store: RAILGATE_STORE=auto and neither REDIS_URL nor RAILGATE_REDIS_CLUSTER_NODES is set. Split processes share their state only through Redis: set REDIS_URL (or RAILGATE_REDIS_CLUSTER_NODES), or RAILGATE_STORE=embedded for a process on its own",
    );
    const asked = await openStore(loadConfig({ RAILGATE_STORE: "embedded" }), nobody, "speech");
    expect(asked.kind).to.equal("memory");
    await asked.close();
  });

  it("railgate_store_up: 1 while the store answers, 0 while it does not, 1 again once it is back", async () => {
    const own = await startRedis();
    const store = await openStore(
      loadConfig({ REDIS_URL: own.url, RAILGATE_REDIS_COMMAND_TIMEOUT_MS: "200" }),
    );
    const up = async () =>
      sample(await registry.metrics(), "railgate_store_up", { store: "redis" });
    try {
      expect(await up()).to.equal(1);
      own.freeze();
      expect(await pollUntil(up, (v) => v === 0)).to.equal(0);
      own.thaw();
      expect(await pollUntil(up, (v) => v === 1)).to.equal(1);
    } finally {
      own.thaw();
      await store.close();
      await own.stop();
    }
  });

  it("RAILGATE_STORE=embedded: the embedded store even with a Redis at the local default, without probing it", async () => {
    const { store, line } = await open({ RAILGATE_STORE: "embedded" }, redis.url);
    await store.close();
    expect(store.kind).to.equal("memory");
    expect(line).to.include({ store: "embedded", reason: "RAILGATE_STORE=embedded" });
    expect(line).to.not.have.property("unusedRedis");
  });
});
