import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/**
 * Each gateway caches authenticated keys; a change made through one replica
 * must reach the other's cache through the AccountService invalidation stream.
 */
describe("gateway: key cache across replicas", () => {
  let redis: ThrowawayRedis;
  let a: RunningSystem;
  let b: RunningSystem;
  let adminA: Api;
  let adminB: Api;

  before(async function () {
    this.timeout(120_000);
    redis = await startRedis();
    a = await startTestSystem(redis.url);
    b = await startTestSystem(redis.url);
    adminA = new Api(`http://127.0.0.1:${a.gatewayPorts.global}`, MANAGEMENT_KEY);
    adminB = new Api(`http://127.0.0.1:${b.gatewayPorts.global}`, MANAGEMENT_KEY);
  });

  after(async () => {
    await b?.close();
    await a?.close();
    await redis?.stop();
  });

  /** Bounded polling: asserts the outcome, never how long it took. */
  async function eventually(check: () => Promise<boolean>): Promise<boolean> {
    for (let i = 0; i < 100; i++) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 20));
    }
    return false;
  }

  it("stops accepting a key on replica B once replica A disables it, and accepts it again when re-enabled", async () => {
    const created = await adminA.post("/api/v1/keys", { name: "ops", kind: "management" });
    expect(created.status).to.equal(201);
    const ops = adminB.withKey(created.body.key as string);
    // Warm B's cache.
    expect((await ops.get("/api/v1/key")).status).to.equal(200);
    expect((await ops.get("/api/v1/workspaces")).status).to.equal(200);

    const hash = created.body.data.hash as string;
    expect((await adminA.patch(`/api/v1/keys/${hash}`, { disabled: true })).status).to.equal(200);
    expect(
      await eventually(async () => (await ops.get("/api/v1/workspaces")).status === 401),
    ).to.equal(true);
    const refused = await ops.get("/api/v1/workspaces");
    expect(refused.body).to.deep.equal({ error: { code: 401, message: "API key is disabled" } });

    expect((await adminA.patch(`/api/v1/keys/${hash}`, { disabled: false })).status).to.equal(200);
    expect(
      await eventually(async () => (await ops.get("/api/v1/workspaces")).status === 200),
    ).to.equal(true);
  });

  it("refuses a deleted key on the other replica", async () => {
    const created = await adminB.post("/api/v1/keys", { name: "temp", kind: "management" });
    const temp = adminA.withKey(created.body.key as string);
    expect((await temp.get("/api/v1/key")).status).to.equal(200);
    expect((await adminB.delete(`/api/v1/keys/${created.body.data.hash}`)).status).to.equal(200);
    expect(await eventually(async () => (await temp.get("/api/v1/key")).status === 401)).to.equal(
      true,
    );
  });

  it("sees a change made through the same replica on the very next request", async () => {
    const created = await adminA.post("/api/v1/keys", { name: "local", kind: "management" });
    const local = adminA.withKey(created.body.key as string);
    expect((await local.get("/api/v1/key")).status).to.equal(200);
    await adminA.patch(`/api/v1/keys/${created.body.data.hash}`, { disabled: true });
    expect((await local.get("/api/v1/key")).status).to.equal(401);
  });
});
