import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/** The embedded all-in-one (memory store + PGlite): added members survive a restart. */
describe("embedded store: workspace members survive a restart", function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let system: RunningSystem | undefined;

  const start = async () => {
    system = await startTestSystem(
      undefined,
      { env: { RAILGATE_CONFIG_REFILL: "on" } },
      { database: database.db },
    );
    return new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
  };

  before(async () => {
    database = await createTestDatabase("embedded");
  });
  after(async () => {
    await system?.close();
    await database?.dispose();
  });

  it("brings back the members added, not those removed, with their ids and times", async () => {
    let api = await start();
    const ws = await api.post("/api/v1/workspaces", { name: "Members" });
    expectStatus(ws, 201);
    const path = `/api/v1/workspaces/${ws.body.data.id}/members`;
    expectStatus(await api.post(`${path}/add`, { user_ids: ["stays", "leaves", "later"] }), 200);
    expectStatus(await api.post(`${path}/remove`, { user_ids: ["leaves"] }), 200);
    const before = await api.get(path);
    expect(before.body.total_count).to.equal(2);
    const events = await database.db.query<{ action: string }>(
      "SELECT action FROM audit_events WHERE workspace_id = $1 ORDER BY id",
      [ws.body.data.id],
    );
    expect(events.map((e) => e.action)).to.deep.equal([
      "workspace.create",
      "workspace.members_add",
      "workspace.members_remove",
    ]);

    await system?.close();
    system = undefined;
    api = await start();
    const after = await api.get(path);
    expectStatus(after, 200);
    expect(after.body).to.deep.equal(before.body);
  });
});
