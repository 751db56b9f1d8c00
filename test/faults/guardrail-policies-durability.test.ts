import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { applyConfigEntries } from "../../store/config-outbox/apply-sql.js";
import type { ConfigEntry } from "../../store/config-outbox/entry.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api } from "../kit/http.js";
import {
  createPolicies,
  expectDeletedPolicyGone,
  expectPoliciesEnforced,
  policyCatalog,
  policyViews,
} from "../kit/policy-durability.js";
import { pollUntil } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** One drained policy document change of a scope, as the outbox hands it to the database. */
function docEntry(scope: string, stamp: number, version: number, name: string): ConfigEntry {
  const doc = JSON.stringify({ policies: [], accountPolicies: [], managedTypes: [], name });
  return { scope, stamp, event: {}, reply: [1], snapshots: [{ type: "policies", version, doc }] };
}

/**
 * The split topology on Redis and PostgreSQL: guardrail policy documents are recorded in the
 * database through the configuration outbox, and come back (and govern) when Redis is emptied.
 */
describe("faults: guardrail policies survive an emptied Redis across the split topology", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let upstream: FakeOpenAi;
  let dir: string;
  let system: SplitSystem | undefined;
  let env: Record<string, string>;

  before(async () => {
    redis = await startRedis();
    database = await createTestDatabase("postgres");
    if (!database.url) throw new Error("the postgres test database has no URL");
    upstream = await new FakeOpenAi().start();
    dir = mkdtempSync(join(tmpdir(), "rg-policy-durable-"));
    env = {
      DATABASE_URL: database.url,
      RAILGATE_CONFIG_REFILL: "on",
      RAILGATE_SPEECH_CATALOG_FILE: policyCatalog(upstream, dir),
    };
  });
  after(async () => {
    await system?.stop();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await redis?.stop();
    await database?.dispose();
  });

  it("records each document in PostgreSQL and refills policies, assignments and account policies into an emptied Redis", async () => {
    system = await startSplitSystem(redis.url, env, { logLevel: "warn" });
    const api = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const world = await createPolicies(api);
    const before = await policyViews(api, world);
    await expectPoliciesEnforced(system.baseUrl(), world);

    const rows = await pollUntil(
      () =>
        database.db.query<{ scope: string; version: number; deleted: boolean; doc: unknown }>(
          "SELECT scope, version, deleted, doc FROM config_policy_docs ORDER BY scope",
        ),
      (r) => r.length === 3 && r.every((x) => x.scope !== world.workspaceId || x.version >= 3),
      100,
      100,
    );
    expect(rows.map((r) => [r.scope, Number(r.version), r.deleted])).to.have.deep.members([
      ["org", 1, false],
      [world.workspaceId, 3, false],
      [world.deletedWorkspaceId, 1, true],
    ]);
    expect(rows.find((r) => r.scope === world.deletedWorkspaceId)?.doc).to.equal(null);

    await redis.flush();
    const back = await pollUntil(
      () => api.get(`/api/v1/guardrails/policies/budget/${world.budgetId}`),
      (res) => res.status === 200,
      200,
      100,
    );
    expect(back.body.data.name).to.equal("Nothing to spend");
    expect(await policyViews(api, world)).to.deep.equal(before);
    await expectPoliciesEnforced(system.baseUrl(), world);
    await expectDeletedPolicyGone(api, world);
    // The version came back too: a write decided on it applies, and is recorded as the next one.
    const renamed = await api.request(
      "PUT",
      `/api/v1/guardrails/policies/budget/${world.budgetId}`,
      {
        name: "Renamed after the refill",
        policy_type: "budget",
        config: { limit_usd: 0, reset_interval: "daily", include_byok_in_budgets: false },
      },
    );
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    const after = await pollUntil(
      () =>
        database.db.query<{ version: number }>(
          "SELECT version FROM config_policy_docs WHERE scope = $1",
          [world.workspaceId],
        ),
      (r) => Number(r[0]?.version) === 4,
      100,
      100,
    );
    expect(Number(after[0]?.version)).to.equal(4);
  });

  it("a drain repeated writes a document once, and an older document never replaces a newer one", async () => {
    const scope = "policy-order-scope";
    const read = () =>
      database.db.query<{ version: number; doc: { name: string } }>(
        "SELECT version, doc FROM config_policy_docs WHERE scope = $1",
        [scope],
      );
    const v1 = docEntry(scope, 1_000, 1, "first");
    const v2 = docEntry(scope, 2_000, 2, "second");
    await applyConfigEntries(database.db, [v1, v2]);
    await applyConfigEntries(database.db, [v1, v2]);
    let rows = await read();
    expect(rows.map((r) => [Number(r.version), r.doc.name])).to.deep.equal([[2, "second"]]);
    // Two drainers: the older entry lands last, even with a later stamp (a refilled Redis).
    await applyConfigEntries(database.db, [docEntry(scope, 9_000, 1, "stale")]);
    rows = await read();
    expect(rows.map((r) => [Number(r.version), r.doc.name])).to.deep.equal([[2, "second"]]);
    await applyConfigEntries(database.db, [docEntry(scope, 3_000, 3, "third")]);
    rows = await read();
    expect(rows.map((r) => [Number(r.version), r.doc.name])).to.deep.equal([[3, "third"]]);
  });
});
