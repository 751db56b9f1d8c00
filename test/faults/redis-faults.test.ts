import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { hashSecret } from "../../domain/ids.js";
import { flushLogDedupe } from "../../platform/observability/log-dedupe.js";
import { expectError, expectNoLeaks, expectStatus } from "../kit/expect.js";
import { Api, type JsonResponse } from "../kit/http.js";
import { captureLogs } from "../kit/log-capture.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/** Far above the 1 s command time-out: a request still unanswered by then hangs. */
const HANG_LIMIT_MS = 10_000;

/** Polls until `probe` holds (a bounded wait for recovery, never a timing assertion). */
async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string) {
  let last: T | undefined;
  for (let i = 0; i < 150; i++) {
    last = await probe();
    if (ok(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${what}: still not so after 15 s (last: ${JSON.stringify(last)})`);
}

function expectUnavailable(res: JsonResponse): void {
  expectError(res, 503);
  expect(res.headers.get("retry-after")).to.match(/^[1-9]\d*$/);
  expect(res.body.error.message).to.not.match(/redis|ECONN|timed out|at /i);
}

/**
 * Destructive: freezes, kills and empties the system's Redis underneath it, so
 * it runs on a system and a Redis of its own.
 */
describe("faults: Redis frozen, killed, restarted empty", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let admin: Api;
  let anon: Api;
  let speaker: Api;

  /** A request with a client-side bound: it must answer, not hang. */
  const bounded = (
    api: Api,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    Promise.race([
      api.request(method, path, body, { headers }),
      new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`${method} ${path} hung for ${HANG_LIMIT_MS} ms`)),
          HANG_LIMIT_MS,
        ).unref(),
      ),
    ]);

  before(async function () {
    this.timeout(120_000);
    redis = await startRedis();
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    const base = `http://127.0.0.1:${system.gatewayPorts.global}`;
    admin = new Api(base, MANAGEMENT_KEY);
    anon = new Api(base);
    const key = await admin.post("/api/v1/keys", { name: "speaker" });
    expectStatus(key, 201);
    speaker = new Api(base, key.body.key);
  });

  after(async () => {
    redis?.thaw();
    await system?.close();
    await redis?.stop();
  });

  describe("frozen (SIGSTOP)", () => {
    before(() => redis.freeze());
    after(() => redis.thaw());

    it("answers 503 with Retry-After instead of hanging, management and speech alike", async () => {
      const answers = await Promise.all([
        bounded(admin, "GET", "/api/v1/guardrails"),
        bounded(admin, "POST", "/api/v1/guardrails", { name: "During the freeze" }),
        bounded(speaker, "POST", "/api/v1/audio/speech", {
          model: "railgate/espeak-ng",
          voice: "en-us",
          input: "Hello.",
        }),
      ]);
      for (const res of answers) expectUnavailable(res);
    });

    it("tells the client nothing of the store's own words, and logs them with the request id", async () => {
      const logs = captureLogs("warn");
      // The 503s above logged this same failure: identical lines within a window are one
      // line and a count (platform/observability/log-dedupe.ts), so start a new window for this request.
      flushLogDedupe();
      try {
        const requestId = `frozen-store-${Date.now()}`;
        const res = await bounded(
          admin,
          "POST",
          "/api/v1/guardrails",
          { name: "Logged" },
          { "x-request-id": requestId },
        );
        expectUnavailable(res);
        expectNoLeaks(res.body.error.message);
        const lines = await pollUntil(
          async () => logs.forRequest(requestId),
          (found) => found.some((l) => l.msg === "call failed"),
        );
        const failed = lines.find((l) => l.msg === "call failed");
        expect(failed?.detail).to.match(/Command timed out|Connection is closed|ECONN/);
        expect(failed).to.not.have.property("stack");
      } finally {
        logs.restore();
      }
    });

    it("reports /healthz 503 naming the services whose store is down", async () => {
      const res = await bounded(anon, "GET", "/healthz");
      expectError(res, 503);
      expect(res.body.error.message).to.match(
        /guardrail service not serving \(its store is down\)/,
      );
      expect(res.body.error.message).to.match(/speech service not serving/);
    });
  });

  describe("thawed (SIGCONT)", () => {
    it("recovers: healthy again and management works", async () => {
      await eventually(
        () => anon.get("/healthz"),
        (r) => r.status === 200,
        "/healthz after SIGCONT",
      );
      expectStatus(await admin.post("/api/v1/guardrails", { name: "After the freeze" }), 201);
    });
  });

  describe("killed (SIGKILL), then restarted empty on the same port", () => {
    it("answers 503 with Retry-After while Redis is gone, and /healthz says so", async () => {
      await redis.kill();
      expectUnavailable(await bounded(admin, "GET", "/api/v1/guardrails"));
      expectUnavailable(await bounded(admin, "POST", "/api/v1/keys", { name: "during" }));
      const health = await bounded(anon, "GET", "/healthz");
      expectError(health, 503);
      expect(health.body.error.message).to.match(/^Service unavailable: guardrail service/);
    });

    it("after the restart, /healthz is green and the operator key works again, without a restart of the system", async () => {
      await redis.restart();
      await eventually(
        () => anon.get("/healthz"),
        (r) => r.status === 200,
        "/healthz after the Redis restart",
      );
      const me = await admin.get("/api/v1/key");
      expectStatus(me, 200);
      expect(me.body.data.hash).to.equal(hashSecret(MANAGEMENT_KEY));
      // The emptied store is a first start: the default workspace exists again, so a standard
      // key without workspace_id can be created.
      const key = await eventually(
        () => admin.post("/api/v1/keys", { name: "after the restart" }),
        (r) => r.status === 201,
        "creating a standard key in the re-created default workspace",
      );
      expect(key.body.data.workspace_id).to.be.a("string").and.not.equal("");
    });
  });

  describe("emptied by FLUSHALL (no reconnection at all)", () => {
    it("registers the operator key again by itself, and it keeps working", async () => {
      await redis.flush();
      const client = redis.client();
      try {
        const stored = `rg:{w:org}:k:${hashSecret(MANAGEMENT_KEY)}`;
        expect(await client.exists(stored)).to.equal(0);
        expectStatus(await admin.get("/api/v1/guardrails"), 200);
        await eventually(
          () => client.exists(stored),
          (n) => n === 1,
          "the operator key back in the store",
        );
      } finally {
        client.disconnect();
      }
      expectStatus(await admin.post("/api/v1/guardrails", { name: "After FLUSHALL" }), 201);
    });
  });
});
