import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/**
 * The embedded all-in-one (memory store + PGlite): what `npm start` serves after a restart is
 * what the database recorded, with the same ids, and every write's audit event is stored before
 * its answer.
 */
describe("embedded store: the configuration survives a restart", function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let system: RunningSystem | undefined;

  const start = async () => {
    const started = await startTestSystem(
      undefined,
      { env: { RAILGATE_CONFIG_REFILL: "on" } },
      { database: database.db },
    );
    system = started;
    return {
      api: new Api(`http://127.0.0.1:${started.gatewayPorts.global}`, MANAGEMENT_KEY),
      defaultId: started.defaultWorkspaceId,
    };
  };

  before(async () => {
    database = await createTestDatabase("embedded");
  });
  after(async () => {
    await system?.close();
    await database?.dispose();
  });

  it("brings back workspaces, keys, guardrails, assignments, credits and the default workspace", async () => {
    const first = await start();
    let api = first.api;
    const ws = await api.post("/api/v1/workspaces", { name: "Kept" });
    expectStatus(ws, 201);
    const key = await api.post("/api/v1/keys", { name: "app", workspace_id: ws.body.data.id });
    expectStatus(key, 201);
    const g = await api.post("/api/v1/guardrails", {
      name: "Team",
      workspace_id: ws.body.data.id,
      limit_usd: 5,
      reset_interval: "daily",
    });
    expectStatus(g, 201);
    expectStatus(await api.patch(`/api/v1/guardrails/${g.body.data.id}`, { limit_usd: 7 }), 200);
    expectStatus(
      await api.post(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`, {
        key_hashes: [key.body.data.hash],
      }),
      200,
    );
    expectStatus(
      await api.post(`/api/v1/workspaces/${ws.body.data.id}/credits`, { amount_usd: 3 }),
      200,
    );
    expectStatus(
      await api.post(`/api/v1/workspaces/${ws.body.data.id}/credits`, { amount_usd: 2 }),
      200,
    );
    const before = (await api.get(`/api/v1/guardrails/${g.body.data.id}`)).body.data;
    // Every write's event is in the database already: no batch is waiting in the process.
    const events = await database.db.query<{ action: string }>(
      "SELECT action FROM audit_events WHERE workspace_id = $1 ORDER BY id",
      [ws.body.data.id],
    );
    expect(events.map((e) => e.action)).to.deep.equal([
      "workspace.create",
      "key.create",
      "guardrail.create",
      "guardrail.update",
      "assignment.create",
      "credits.add",
      "credits.add",
    ]);

    await system?.close();
    system = undefined;
    const second = await start();
    api = second.api;
    expect(second.defaultId).to.equal(first.defaultId);
    const after = await api.get(`/api/v1/guardrails/${g.body.data.id}`);
    expectStatus(after, 200);
    expect(after.body.data).to.deep.equal(before);
    const assigned = await api.get(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`);
    expect(assigned.body.data.map((a: { key_hash: string }) => a.key_hash)).to.deep.equal([
      key.body.data.hash,
    ]);
    const credits = await api.get(`/api/v1/workspaces/${ws.body.data.id}/credits`);
    expect(credits.body.data.balance_usd).to.equal(5);
    const self = await api.withKey(key.body.key).get("/api/v1/key");
    expectStatus(self, 200);
  });
});
