import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { type ConfigFile, exportConfig } from "../../apps/cli/config-transfer.js";
import { defaultGuardrailId, newId } from "../../domain/ids.js";
import { WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { GuardrailSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { MemoryStore } from "../../store/memory-store.js";
import { ORG_SCOPE } from "../../store/types.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { expectUsageError, runBin } from "./bin.js";

/** A small configuration, exported from an embedded store. */
async function sample(): Promise<ConfigFile> {
  const store = new MemoryStore();
  const id = newId();
  await store.bootstrapDefaultWorkspace(
    create(WorkspaceSchema, {
      id,
      name: "Default",
      slug: "default",
      defaultGuardrailId: defaultGuardrailId(id),
      createdAt: nowTimestamp(),
    }),
  );
  await store.createGuardrail(
    create(GuardrailSchema, {
      id: newId(),
      workspaceId: id,
      name: "Kept",
      createdAt: nowTimestamp(),
    }),
  );
  await store.addCredits(id, 4_000_000);
  const policies = store.openPolicyDocs();
  await policies.index("account-policy", ORG_SCOPE);
  await policies.write(ORG_SCOPE, 0, {
    policies: [],
    accountPolicies: [
      {
        id: "account-policy",
        policyType: "model_availability",
        name: "Everyone",
        config: { enforce_zdr: true },
        isDefault: true,
        workspaceIds: [],
        optedOutWorkspaceIds: [],
        createdAtMs: 1,
        updatedAtMs: 1,
      },
    ],
  });
  return exportConfig(store);
}

describe("railgate config import / export (the built bin, on Redis and PostgreSQL)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let database: TestDatabase;
  let env: Record<string, string>;
  const dir = makeTempDir("railgate-config-");

  before(async () => {
    redis = await startRedis();
    database = await createTestDatabase("postgres");
    env = { REDIS_URL: redis.url, DATABASE_URL: database.url ?? "", RAILGATE_LOG_LEVEL: "fatal" };
  });
  after(async () => {
    await redis?.stop();
    await database?.dispose();
  });

  it("imports a file, exports the same configuration back, and a second import changes nothing", async () => {
    const file = await sample();
    const path = join(dir, "in.json");
    writeFileSync(path, JSON.stringify(file));
    const first = await runBin(["config", "import", path, "--json"], env);
    expect(first.code, first.stderr).to.equal(0);
    expect(JSON.parse(first.stdout)).to.deep.include({ guardrails: 1, policies: 1, credits: 1 });

    const out = join(dir, "out.json");
    const exported = await runBin(["config", "export", "--out", out, "--json"], env);
    expect(exported.code, exported.stderr).to.equal(0);
    const stdout = await runBin(["config", "export"], env);
    const back = JSON.parse(stdout.stdout) as ConfigFile;
    expect(back.default_workspace_id).to.equal(file.default_workspace_id);
    expect(back.workspaces).to.deep.equal(file.workspaces);
    expect(back.credits).to.deep.equal(file.credits);
    expect(back.policy_docs).to.deep.equal(file.policy_docs);
    expect(back.guardrails.map((g) => (g as { id: string }).id)).to.deep.equal(
      file.guardrails.map((g) => (g as { id: string }).id),
    );

    const second = await runBin(["config", "import", out, "--json"], env);
    expect(second.code, second.stderr).to.equal(0);
    expect(JSON.parse(second.stdout)).to.deep.equal({
      workspaces: 0,
      keys: 0,
      guardrails: 0,
      assignments: 0,
      policies: 0,
      credits: 0,
    });
    // What the import wrote went through the outbox: its audit events are in the database.
    const events = await database.db.query<{ action: string }>(
      "SELECT action FROM audit_events WHERE actor_label = 'railgate config import' ORDER BY id",
    );
    expect(events.map((e) => e.action)).to.include.members([
      "guardrail.create",
      "guardrail_policy.import",
      "credits.add",
    ]);
    // The document went through the outbox too.
    const docs = await database.db.query<{ scope: string; version: number }>(
      "SELECT scope, version FROM config_policy_docs WHERE NOT deleted",
    );
    expect(docs.map((d) => [d.scope, Number(d.version)])).to.deep.equal([[ORG_SCOPE, 1]]);
  });

  it("refuses a file of another version with exit 2", async () => {
    const path = join(dir, "v2.json");
    writeFileSync(path, JSON.stringify({ ...(await sample()), version: 2 }));
    expectUsageError(await runBin(["config", "import", path], env), "version 2");
  });
});
