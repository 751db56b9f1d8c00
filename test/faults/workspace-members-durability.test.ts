import { expect } from "chai";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/**
 * The split topology on Redis and PostgreSQL: an added member is recorded in the database
 * through the configuration outbox (audited), and comes back when Redis is emptied.
 */
describe("faults: workspace members survive an emptied Redis across the split topology", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let system: SplitSystem | undefined;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    database = await createTestDatabase("postgres");
    if (!database.url) throw new Error("the postgres test database has no URL");
    env = { DATABASE_URL: database.url, RAILGATE_CONFIG_REFILL: "on" };
  });
  after(async () => {
    await system?.stop();
    await redis?.stop();
    await database?.dispose();
  });

  it("records adds and removes in PostgreSQL, audits them, and refills them into an emptied Redis", async () => {
    system = await startSplitSystem(redis.url, env, { logLevel: "warn" });
    const api = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const ws = await api.post("/api/v1/workspaces", { name: "Members kept" });
    expectStatus(ws, 201);
    const id: string = ws.body.data.id;
    const doomed = await api.post("/api/v1/workspaces", { name: "Members doomed" });
    const doomedId: string = doomed.body.data.id;
    const members = (w: string) => `/api/v1/workspaces/${w}/members`;
    expectStatus(await api.post(`${members(id)}/add`, { user_ids: ["keep", "drop"] }), 200);
    expectStatus(await api.post(`${members(id)}/remove`, { user_ids: ["drop"] }), 200);
    expectStatus(await api.post(`${members(doomedId)}/add`, { user_ids: ["gone"] }), 200);
    expectStatus(await api.delete(`/api/v1/workspaces/${doomedId}`), 200);
    const listed = (await api.get(members(id))).body;

    const rows = await pollUntil(
      () =>
        database.db.query<{ workspace_id: string; user_id: string; deleted: boolean }>(
          "SELECT workspace_id, user_id, deleted FROM config_workspace_members ORDER BY user_id",
        ),
      (r) => r.length === 3 && r.every((x) => x.user_id !== "gone" || x.deleted),
      100,
      100,
    );
    expect(rows.map((r) => [r.workspace_id, r.user_id, r.deleted])).to.deep.equal([
      [id, "drop", true],
      [doomedId, "gone", true],
      [id, "keep", false],
    ]);
    const audit = await pollUntil(
      () =>
        database.db.query<{ action: string; workspace_id: string }>(
          "SELECT action, workspace_id FROM audit_events WHERE action LIKE 'workspace.members_%' ORDER BY at, id",
        ),
      (r) => r.length === 3,
      100,
      100,
    );
    expect(audit.map((a) => [a.action, a.workspace_id])).to.deep.equal([
      ["workspace.members_add", id],
      ["workspace.members_remove", id],
      ["workspace.members_add", doomedId],
    ]);

    await redis.flush();
    const back = await pollUntil(
      () => api.get(members(id)),
      (res) => res.status === 200 && res.body.total_count === 1,
      200,
      100,
    );
    expect(back.body).to.deep.equal(listed);
    expect(back.body.data.map((m: { user_id: string }) => m.user_id)).to.deep.equal(["keep"]);
  });
});
