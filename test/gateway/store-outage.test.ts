import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/**
 * Destructive: stops the system's Redis underneath it, so it runs on a
 * system of its own. Every call that needs the store answers 503 with
 * Retry-After in the one error shape, never an internal message or a stack trace.
 */
describe("gateway: when the store goes away", () => {
  let redis: ThrowawayRedis;
  let system: RunningSystem;
  let api: Api;
  let guardrailId: string;

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url);
    api = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    const res = await api.post("/api/v1/guardrails", { name: "Before the outage" });
    expectStatus(res, 201);
    guardrailId = res.body.data.id;
    await redis.stop();
  });

  after(async () => {
    await system?.close();
  });

  it("answers 503 with Retry-After everywhere, saying nothing internal", async () => {
    // (GET /api/v1/key may still answer from the services' principal cache.)
    const requests = [
      api.get("/api/v1/guardrails"),
      api.get(`/api/v1/guardrails/${guardrailId}`),
      api.patch(`/api/v1/guardrails/${guardrailId}`, { description: "during the outage" }),
      api.post("/api/v1/guardrails", { name: "During the outage" }),
      api.post("/api/v1/keys", { name: "During the outage" }),
      // A write with an Idempotency-Key: its claim cannot be taken, so nothing runs.
      api.request(
        "POST",
        "/api/v1/keys",
        { name: "During the outage" },
        { headers: { "idempotency-key": "outage-1" } },
      ),
    ];
    for (const res of await Promise.all(requests)) {
      expectError(res, 503);
      expect(res.headers.get("retry-after")).to.match(/^\d+$/);
      expect(res.body.error.message).to.match(/^Service unavailable: the data store/);
      expect(res.body.error.message).to.not.match(/redis|ECONNREFUSED|at /i);
    }
  });

  it("reports itself unhealthy with 503 so a load balancer takes it out", async () => {
    const res = await new Api(`http://127.0.0.1:${system.gatewayPorts.europe}`).get("/healthz");
    expectError(res, 503);
    expect(res.body.error.message).to.match(/^Service unavailable/);
    expect(res.body.error.message).to.not.match(/redis|ECONNREFUSED|at /i);
  });

  it("still answers what needs no store in the one error shape", async () => {
    expectError(await api.get("/api/v1/nope"), 404);
    expectError(
      await new Api(`http://127.0.0.1:${system.gatewayPorts.global}`).get("/api/v1/key"),
      401,
    );
    expectError(await api.request("PUT", "/api/v1/guardrails"), 405);
  });
});

/**
 * A speech request the store could not admit (Redis frozen: its commands time out) is answered
 * 503 and logged as "unavailable": an outage is not a policy refusal, so the request log's
 * status filter and the dashboard's refusals do not count it.
 */
describe("gateway: a speech request during a store outage", () => {
  // A system of its own: its Redis is frozen underneath it.
  const h = useSpeechSystem({ embeddedEngine: "off" });

  it("is answered 503 and logged as unavailable, not refused", async () => {
    const body = { model: MODELS.basic, voice: "alloy", input: "Before the outage." };
    // Served once first: the key and its policy are in the caches an outage leaves readable.
    expectAudio(await h.speak(body));
    // This suite is in the system lane: its store is a throwaway redis-server there.
    const redis = h.redis as ThrowawayRedis;
    redis.freeze();
    let refused: Awaited<ReturnType<typeof h.speak>>;
    try {
      refused = await h.speak({ ...body, input: "During the outage." });
    } finally {
      redis.thaw();
    }
    expectError(refused, 503);
    expect(refused.body.error.message).to.match(/^Service unavailable: the data store/);

    const list = (status: string) =>
      h.admin.get(`/api/v1/generations?key_hash=${h.key.hash}&status=${status}`);
    const unavailable = await pollUntil(
      () => list("unavailable"),
      (r) => r.status === 200 && r.body.data.length === 1,
    );
    expectStatus(unavailable, 200);
    expect(unavailable.body.data).to.have.length(1);
    expect(unavailable.body.data[0]).to.include({
      status: "unavailable",
      refusal_reason: "store_unavailable",
      finish_reason: "unavailable",
    });
    const policyRefusals = await list("refused");
    expectStatus(policyRefusals, 200);
    expect(policyRefusals.body.data).to.deep.equal([]);
  });
});
