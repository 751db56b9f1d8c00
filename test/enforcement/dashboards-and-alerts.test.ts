import { execFile } from "node:child_process";
import { dirname } from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, Gateway } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { sharedRedisUrl } from "../kit/lane.js";
import { pollUntil } from "../kit/poll.js";
import {
  dashboardExpressions,
  exposedSeries,
  RULES_FILE,
  RULES_TEST_FILE,
  ruleExpressions,
  type ShippedExpression,
  sample,
  seriesNames,
} from "../kit/promql.js";
import { startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const run = promisify(execFile);

/** Every expression shipped in deploy/: the dashboard's and the alert rules'. */
const shipped = (): ShippedExpression[] => [...dashboardExpressions(), ...ruleExpressions()];

/** The names each shipped expression reads that no scrape exposes a sample of. */
function missingSeries(exposed: Set<string>): string[] {
  return shipped().flatMap(({ where, expr }) =>
    seriesNames(expr)
      .filter((name) => !exposed.has(name))
      .map((name) => `${where}: ${name}`),
  );
}

async function scrape(url: string, key?: string): Promise<string> {
  const res = await fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {});
  expect(res.status, url).to.equal(200);
  return res.text();
}

/**
 * Traffic that makes every series the dashboard and the alerts read exist: management calls, a
 * speech stream, an upstream failure (a 502), a content-filter refusal, a guardrail with a budget
 * that has been charged, a metered workspace.
 */
async function exerciseEverySeries(gw: Gateway, failUpstream: () => void): Promise<void> {
  const ws = await gw.workspace();
  await gw.addCredits(ws, 10);
  const key = await gw.key(ws);
  const budget = await gw.guardrail(ws, { limit_usd: 1, reset_interval: "daily" });
  await gw.assignKeys(budget, key);
  expectAudio(await gw.speak(key, { model: MODELS.fast, input: "Every series." }), "fast");
  const { key: filtered } = await gw.governedKey({
    content_filter_builtins: [{ slug: "email", action: "block" }],
  });
  expectError(
    await gw.speak(filtered, { model: MODELS.fast, input: "Mail jane@example.com." }),
    403,
    /^Request blocked by content filter/,
  );
  failUpstream();
  expect((await gw.speak(key, { model: MODELS.fast, input: "This one fails." })).status).to.equal(
    502,
  );
}

describe("dashboards and alerts: deploy/grafana and deploy/prometheus", () => {
  const w = useWorld();

  it("every series the dashboard and the alert rules read is exported by npm start's process", async () => {
    await exerciseEverySeries(w.gw, () => {
      w.fakes.fast.behaviour = { kind: "status", status: 500 };
    });
    // The counters move as each response closes, a moment after the client has it.
    const text = await pollUntil(
      () => scrape(`${w.gw.url()}/metrics`, MANAGEMENT_KEY),
      (t) => missingSeries(exposedSeries(t)).length === 0,
    );
    expect(missingSeries(exposedSeries(text))).to.deep.equal([]);
  });

  it("the new series count what happened: request and gRPC durations, credits, the store", async () => {
    const metrics = () => scrape(`${w.gw.url()}/metrics`, MANAGEMENT_KEY);
    const ws = await w.gw.workspace();
    await w.gw.addCredits(ws, 7.5);
    await w.gw.addCredits(ws, -2.5);
    const before = await metrics();
    const route = { route: "/api/v1/workspaces/:id", method: "GET", status: "200" };
    const res = await new Api(w.gw.url("us"), MANAGEMENT_KEY).get(`/api/v1/workspaces/${ws.id}`);
    expect(res.status).to.equal(200);
    const grpc = {
      service: "railgate.account.v1.AccountService",
      method: "GetWorkspace",
      code: "OK",
    };
    const count = (text: string, name: string, labels: Record<string, string>) =>
      sample(text, `${name}_count`, labels);
    // The request is counted as its response closes, a moment after the client has it.
    const after = await pollUntil(
      metrics,
      (t) =>
        count(t, "railgate_http_request_duration_seconds", route) >
        count(before, "railgate_http_request_duration_seconds", route),
    );
    expect(count(after, "railgate_http_request_duration_seconds", route)).to.equal(
      count(before, "railgate_http_request_duration_seconds", route) + 1,
    );
    // Its whole duration falls in the +Inf bucket, and in no bucket below 0.
    expect(
      sample(after, "railgate_http_request_duration_seconds_bucket", { ...route, le: "+Inf" }),
    ).to.equal(count(after, "railgate_http_request_duration_seconds", route));
    for (const side of ["client", "server"]) {
      const name = `railgate_grpc_${side}_duration_seconds`;
      expect(count(after, name, grpc), side).to.be.greaterThan(count(before, name, grpc));
    }
    // Read from the store at scrape time: the balance and every credit added, for this workspace.
    expect(sample(after, "railgate_workspace_credits_usd", { workspace_id: ws.id })).to.equal(5);
    expect(sample(after, "railgate_workspace_credits_added_usd", { workspace_id: ws.id })).to.equal(
      5,
    );
    // An unmetered workspace has no credit series.
    const unmetered = await w.gw.workspace();
    expect(await metrics()).to.not.include(`workspace_id="${unmetered.id}"`);
    expect(sample(after, "railgate_store_up", { store: "redis" })).to.equal(1);
    expect(sample(after, "process_resident_memory_bytes")).to.be.greaterThan(0);
    expect(after).to.match(/^nodejs_eventloop_lag_p99_seconds \S+$/m);
  });

  // A split deployment talks gRPC whatever RAILGATE_TEST_TRANSPORT says: the in-process lane
  // runs it, the gRPC-hop lane (the same suites again) would only repeat it.
  const splitIt = process.env.RAILGATE_TEST_TRANSPORT === "grpc" ? it.skip : it;
  splitIt(
    "... and by a split deployment: the gateway's /metrics and each service's RAILGATE_METRICS_PORT",
    async function () {
      this.timeout(120_000);
      // The kit gives the three processes one request-log database, as a deployment has.
      const split = await startSplitSystem(sharedRedisUrl(w.redis), w.env, { metrics: true });
      try {
        const gw = new Gateway({
          gatewayPorts: {
            global: Number(new URL(split.baseUrl("global")).port),
            europe: Number(new URL(split.baseUrl("europe")).port),
            us: Number(new URL(split.baseUrl("us")).port),
          },
        });
        await exerciseEverySeries(gw, () => {
          w.fakes.fast.behaviour = { kind: "status", status: 500 };
        });
        const scrapeAll = async () => {
          const texts = await Promise.all([
            scrape(`${split.baseUrl()}/metrics`, MANAGEMENT_KEY),
            scrape(split.metricsUrls.guardrail as string),
            scrape(split.metricsUrls.speech as string),
          ]);
          return new Set(texts.flatMap((t) => [...exposedSeries(t)]));
        };
        const exposed = await pollUntil(scrapeAll, (e) => missingSeries(e).length === 0);
        expect(missingSeries(exposed)).to.deep.equal([]);
      } finally {
        await split.stop();
      }
    },
  );

  it("the alert rules pass promtool's checks and their unit tests (promtool test rules)", async () => {
    const promtool = process.env.PROMTOOL ?? "promtool";
    const options = { cwd: dirname(RULES_FILE) };
    const failed = (err: unknown) => {
      const e = err as { code?: string; stdout?: string; stderr?: string };
      if (e.code === "ENOENT") {
        throw new Error("promtool not found: install it with `sudo apt-get install prometheus`");
      }
      throw new Error(`promtool failed:\n${e.stdout ?? ""}${e.stderr ?? ""}`);
    };
    const check = await run(promtool, ["check", "rules", RULES_FILE], options).catch(failed);
    expect(check.stdout).to.match(/SUCCESS: 7 rules found/);
    const tests = await run(promtool, ["test", "rules", RULES_TEST_FILE], options).catch(failed);
    expect(tests.stdout).to.match(/SUCCESS/);
  });
});
