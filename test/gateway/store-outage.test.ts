import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
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
