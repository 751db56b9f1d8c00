import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
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
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

/**
 * The embedded all-in-one (memory store + PGlite): guardrail policies, their assignments and
 * the account's policies survive a restart, and still govern requests.
 */
describe("embedded store: guardrail policies survive a restart", function () {
  this.timeout(60_000);
  let database: TestDatabase;
  let upstream: FakeOpenAi;
  let dir: string;
  let catalog: string;
  let system: RunningSystem | undefined;

  const start = async () => {
    system = await startTestSystem(
      undefined,
      { env: { RAILGATE_CONFIG_REFILL: "on", RAILGATE_SPEECH_CATALOG_FILE: catalog } },
      { database: database.db },
    );
    const baseUrl = `http://127.0.0.1:${system.gatewayPorts.global}`;
    return { baseUrl, api: new Api(baseUrl, MANAGEMENT_KEY) };
  };

  before(async () => {
    database = await createTestDatabase("embedded");
    upstream = await new FakeOpenAi().start();
    dir = mkdtempSync(join(tmpdir(), "rg-policy-durable-"));
    catalog = policyCatalog(upstream, dir);
  });
  after(async () => {
    await system?.close();
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    await database?.dispose();
  });

  it("brings back every policy document, with its version, and enforces it", async () => {
    let { baseUrl, api } = await start();
    const world = await createPolicies(api);
    const before = await policyViews(api, world);
    await expectPoliciesEnforced(baseUrl, world);
    // Written before each write answered: no document is waiting in the process.
    const rows = await database.db.query<{ scope: string; version: number; deleted: boolean }>(
      "SELECT scope, version, deleted FROM config_policy_docs ORDER BY scope",
    );
    expect(rows.map((r) => [r.scope, Number(r.version), r.deleted])).to.have.deep.members([
      ["org", 1, false],
      // Create, assign, then the default moderation policy.
      [world.workspaceId, 3, false],
      [world.deletedWorkspaceId, 1, true],
    ]);

    await system?.close();
    system = undefined;
    ({ baseUrl, api } = await start());
    expect(await policyViews(api, world)).to.deep.equal(before);
    await expectPoliciesEnforced(baseUrl, world);
    await expectDeletedPolicyGone(api, world);
    // The version counts on from the one recorded: a write decided on it still applies.
    const renamed = await api.request(
      "PUT",
      `/api/v1/guardrails/policies/budget/${world.budgetId}`,
      {
        name: "Renamed after the restart",
        policy_type: "budget",
        config: { limit_usd: 0, reset_interval: "daily", include_byok_in_budgets: false },
      },
    );
    expect(renamed.status, JSON.stringify(renamed.body)).to.equal(200);
    const row = await database.db.query<{ version: number }>(
      "SELECT version FROM config_policy_docs WHERE scope = $1",
      [world.workspaceId],
    );
    expect(Number(row[0]?.version)).to.equal(4);
  });
});
