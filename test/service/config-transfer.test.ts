import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  type ConfigFile,
  ConfigFileRefused,
  checkConfigFile,
  exportConfig,
  importConfig,
} from "../../apps/cli/config-transfer.js";
import { defaultGuardrailId, membershipId, newId } from "../../domain/ids.js";
import {
  ApiKeySchema,
  KeyKind,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import { GuardrailSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import { MemoryStore } from "../../store/memory-store.js";
import { ORG_SCOPE, type Store } from "../../store/types.js";

async function populate(store: Store): Promise<void> {
  const defaultId = newId();
  await store.bootstrapDefaultWorkspace(
    create(WorkspaceSchema, {
      id: defaultId,
      name: "Default",
      slug: "default",
      defaultGuardrailId: defaultGuardrailId(defaultId),
      createdAt: nowTimestamp(),
    }),
  );
  const wsId = newId();
  await store.createWorkspace(
    create(WorkspaceSchema, {
      id: wsId,
      name: "Team",
      slug: "team",
      defaultGuardrailId: defaultGuardrailId(wsId),
      audioCache: true,
      createdAt: nowTimestamp(),
    }),
  );
  await store.createKey(
    ORG_SCOPE,
    create(ApiKeySchema, {
      hash: "m".repeat(64),
      name: "ops",
      kind: KeyKind.MANAGEMENT,
      createdAt: nowTimestamp(),
    }),
  );
  await store.createKey(
    wsId,
    create(ApiKeySchema, {
      hash: "s".repeat(64),
      name: "app",
      workspaceId: wsId,
      memberUserId: "u1",
      limit: 5,
      createdAt: nowTimestamp(),
    }),
  );
  const gId = newId();
  const g = create(GuardrailSchema, {
    id: gId,
    workspaceId: wsId,
    name: "EU",
    createdAt: nowTimestamp(),
  });
  await store.createGuardrail(g);
  const next = create(GuardrailSchema, { ...g, description: "patched", limitUsd: 7 });
  await store.patchGuardrail({
    workspaceId: wsId,
    id: gId,
    readVersion: 1,
    fields: ["description", "limit_usd"],
    next,
    unchanged: [],
    read: g,
    materialize: false,
  });
  const at = Date.now();
  await store.assign("key", [
    {
      id: newId(),
      subject: "s".repeat(64),
      guardrailId: gId,
      workspaceId: wsId,
      assignedBy: "t",
      createdAtMs: at,
    },
  ]);
  await store.assign("member", [
    {
      id: newId(),
      subject: "u1",
      guardrailId: gId,
      workspaceId: wsId,
      assignedBy: "t",
      createdAtMs: at,
    },
  ]);
  await store.addCredits(wsId, 12_500_000);
  await store.addCredits(wsId, -2_000_000);
}

/** The export without what an import does not carry over: its time and the guardrails' versions. */
function comparable(f: ConfigFile) {
  return {
    ...f,
    exported_at: undefined,
    guardrails: f.guardrails.map((g) => ({
      ...(g as Record<string, unknown>),
      version: undefined,
    })),
    assignments: f.assignments.map((a) => ({ ...a, id: undefined })),
  };
}

describe("railgate config export / import", () => {
  it("round-trips the whole configuration with the same ids and key hashes, and a second import changes nothing", async () => {
    const source = new MemoryStore();
    await populate(source);
    const file = await exportConfig(source);
    expect(file.workspaces).to.have.length(2);
    expect(file.keys.map((k) => k.scope)).to.include(ORG_SCOPE);

    const target = new MemoryStore();
    const counts = await importConfig(target, checkConfigFile(JSON.parse(JSON.stringify(file))));
    expect(counts).to.deep.include({ keys: 2, guardrails: 1, assignments: 2, credits: 1 });
    const again = await exportConfig(target);
    expect(comparable(again)).to.deep.equal(comparable(file));
    expect(await target.defaultWorkspaceId()).to.equal(file.default_workspace_id);

    expect(await importConfig(target, file)).to.deep.equal({
      workspaces: 0,
      keys: 0,
      guardrails: 0,
      assignments: 0,
      policies: 0,
      credits: 0,
    });
  });

  it("carries a workspace's added members over, and an import of them again changes nothing", async () => {
    const source = new MemoryStore();
    await populate(source);
    const [ws] = (await source.listWorkspaces(0, 10)).items.filter((w) => w.slug === "team");
    const wsId = ws?.id ?? "";
    const at = Date.now();
    const records = ["ann", "ben"].map((userId) => ({
      id: membershipId(wsId, userId),
      userId,
      workspaceId: wsId,
      role: "member" as const,
      createdAtMs: at,
    }));
    await source.addMembers(wsId, records);
    const file = await exportConfig(source);
    expect(file.members).to.deep.equal(records);

    const target = new MemoryStore();
    await importConfig(target, checkConfigFile(JSON.parse(JSON.stringify(file))));
    expect(await target.listMembers(wsId)).to.deep.equal(records);
    expect((await importConfig(target, file)).workspaces).to.equal(0);
    // A file from before members were exported imports as it always did.
    const { members: _, ...older } = file;
    expect((await importConfig(new MemoryStore(), checkConfigFile(older))).keys).to.equal(2);
  });

  it("carries the policy documents over (the account's too), and an import of them again changes nothing", async () => {
    const source = new MemoryStore();
    await populate(source);
    const [ws] = (await source.listWorkspaces(0, 10)).items.filter((w) => w.slug === "team");
    const wsId = ws?.id ?? "";
    const docs = source.openPolicyDocs();
    const doc = {
      policies: [
        {
          id: "p1",
          workspaceId: wsId,
          policyType: "budget" as const,
          name: "Team budget",
          config: { limit_usd: 2, reset_interval: "daily", include_byok_in_budgets: false },
          apiKeyHashes: ["s".repeat(64)],
          memberIds: [],
          isWorkspaceDefault: false,
          optedOutApiKeyHashes: [],
          optedOutMemberIds: [],
          updatedAtMs: 1_700_000_000_000,
          revision: 1,
        },
      ],
      managedTypes: ["budget" as const],
    };
    await docs.index("p1", wsId);
    await docs.write(wsId, 0, doc);
    const accountDoc = {
      policies: [],
      accountPolicies: [
        {
          id: "a1",
          policyType: "moderation" as const,
          name: "Everyone",
          config: {},
          isDefault: true,
          workspaceIds: [],
          optedOutWorkspaceIds: [],
          createdAtMs: 1,
          updatedAtMs: 1,
        },
      ],
    };
    await docs.index("a1", ORG_SCOPE);
    await docs.write(ORG_SCOPE, 0, accountDoc);
    const file = await exportConfig(source);
    expect(file.policy_docs).to.deep.equal([
      { scope: ORG_SCOPE, doc: accountDoc },
      { scope: wsId, doc },
    ]);

    const target = new MemoryStore();
    const counts = await importConfig(target, checkConfigFile(JSON.parse(JSON.stringify(file))));
    expect(counts.policies).to.equal(2);
    const imported = target.openPolicyDocs();
    expect((await imported.read(wsId)).doc).to.deep.equal(doc);
    expect((await imported.read(ORG_SCOPE)).doc).to.deep.equal(accountDoc);
    expect(await imported.workspaceOf("p1")).to.equal(wsId);
    expect(await imported.workspaceOf("a1")).to.equal(ORG_SCOPE);
    expect((await importConfig(target, file)).policies).to.equal(0);
    // A file from before policy documents were exported imports as it always did.
    const { policy_docs: _, ...older } = file;
    expect((await importConfig(new MemoryStore(), checkConfigFile(older))).policies).to.equal(0);
    expect(() => checkConfigFile({ ...file, policy_docs: [{ scope: 1 }] })).to.throw(
      ConfigFileRefused,
      /policy_docs\[0\] must have a scope/,
    );
  });

  it("refuses a file of another format or version before writing anything", async () => {
    const file = await exportConfig(new MemoryStore());
    expect(() => checkConfigFile({ ...file, version: 2 })).to.throw(ConfigFileRefused, /version 2/);
    expect(() => checkConfigFile({ ...file, format: "other" })).to.throw(
      ConfigFileRefused,
      /format/,
    );
    expect(() => checkConfigFile({ ...file, keys: {} })).to.throw(ConfigFileRefused, /keys/);
  });
});
