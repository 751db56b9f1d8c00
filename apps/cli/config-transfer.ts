import { equals, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import type { AuditOrigin } from "../../domain/audit.js";
import {
  type ApiKey,
  ApiKeySchema,
  type Workspace,
  WorkspaceSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import { type Guardrail, GuardrailSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { AuditNote } from "../../store/config-outbox/entry.js";
import { encodeField, STORED_FIELDS } from "../../store/guardrail-fields.js";
import { ACCOUNT_DOC } from "../../store/policies/types.js";
import {
  type AssignmentKind,
  type AssignmentRecord,
  type MemberRecord,
  ORG_SCOPE,
  type Store,
} from "../../store/types.js";
import { exportPolicyDocs, importPolicyDocs, type PolicyDocEntry } from "./policy-transfer.js";

/** What `railgate config export` writes; an import refuses any other format or version. */
export const CONFIG_FORMAT = "railgate-config";
export const CONFIG_FORMAT_VERSION = 1;

/**
 * The whole configuration as one JSON document: messages in their protobuf JSON form, keys by
 * hash (a key's secret is never stored, so never exported), credits as micro-dollars.
 */
export interface ConfigFile {
  format: typeof CONFIG_FORMAT;
  version: number;
  exported_at: string;
  default_workspace_id: string | null;
  workspaces: JsonValue[];
  keys: { scope: string; key: JsonValue }[];
  guardrails: JsonValue[];
  assignments: (AssignmentRecord & { kind: AssignmentKind })[];
  /** Added workspace members; absent in a file exported before members were stored. */
  members?: MemberRecord[];
  /** Guardrail policy documents (the account's as "org"); absent in a file from before them. */
  policy_docs?: PolicyDocEntry[];
  credits: { workspace_id: string; balance_micros: number }[];
}

const PAGE = 100;

async function all<T>(page: (offset: number) => Promise<{ items: T[] }>): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { items } = await page(offset);
    out.push(...items);
    if (items.length < PAGE) return out;
  }
}

export async function exportConfig(store: Store, now = new Date()): Promise<ConfigFile> {
  const workspaces = await all((o) => store.listWorkspaces(o, PAGE));
  const keys = await all((o) => store.listKeys(undefined, o, PAGE));
  const guardrails: Guardrail[] = [];
  for (const ws of workspaces)
    guardrails.push(...(await all((o) => store.listGuardrails(ws.id, o, PAGE))));
  const assignments: ConfigFile["assignments"] = [];
  for (const kind of ["key", "member"] as const) {
    const records = await all((o) => store.listAssignments(kind, undefined, undefined, o, PAGE));
    assignments.push(...records.map((r) => ({ kind, ...r })));
  }
  const members: MemberRecord[] = [];
  for (const ws of workspaces) members.push(...(await store.listMembers(ws.id)));
  const policyDocs = await exportPolicyDocs(
    store,
    workspaces.map((w) => w.id),
  );
  const credits: ConfigFile["credits"] = [];
  for (const ws of workspaces) {
    const balance = await store.getCredits(ws.id);
    if (balance !== undefined) credits.push({ workspace_id: ws.id, balance_micros: balance });
  }
  return {
    format: CONFIG_FORMAT,
    version: CONFIG_FORMAT_VERSION,
    exported_at: now.toISOString(),
    default_workspace_id: (await store.defaultWorkspaceId()) ?? null,
    workspaces: workspaces.map((w) => toJson(WorkspaceSchema, { ...w, isDefault: false })),
    // The assigned guardrail is an assignment, exported as one.
    keys: keys.map((k) => ({
      scope: k.workspaceId || ORG_SCOPE,
      key: toJson(ApiKeySchema, { ...k, guardrailId: "" }),
    })),
    guardrails: guardrails.map((g) => toJson(GuardrailSchema, g)),
    assignments,
    members,
    policy_docs: policyDocs,
    credits,
  };
}

/** A file that is not this format and version, refused before anything is written. */
export class ConfigFileRefused extends Error {}

export function checkConfigFile(value: unknown): ConfigFile {
  const f = value as Partial<ConfigFile> | null;
  if (!f || typeof f !== "object" || f.format !== CONFIG_FORMAT) {
    throw new ConfigFileRefused(
      `not a Railgate configuration export (format must be "${CONFIG_FORMAT}")`,
    );
  }
  if (f.version !== CONFIG_FORMAT_VERSION) {
    throw new ConfigFileRefused(
      `configuration export version ${String(f.version)} is not ${CONFIG_FORMAT_VERSION}, the version this Railgate reads`,
    );
  }
  for (const list of ["workspaces", "keys", "guardrails", "assignments", "credits"] as const) {
    if (!Array.isArray(f[list])) throw new ConfigFileRefused(`${list} must be a list`);
  }
  if (f.members !== undefined && !Array.isArray(f.members))
    throw new ConfigFileRefused("members must be a list");
  if (f.policy_docs !== undefined && !Array.isArray(f.policy_docs))
    throw new ConfigFileRefused("policy_docs must be a list");
  f.policy_docs?.forEach((d, i) => {
    if (typeof d?.scope !== "string" || !Array.isArray(d.doc?.policies))
      throw new ConfigFileRefused(
        `policy_docs[${i}] must have a scope (string) and a doc with a list of policies`,
      );
  });
  return f as ConfigFile;
}

/** What an import changed (an import of the same file again changes nothing). */
export interface ImportCounts {
  workspaces: number;
  keys: number;
  guardrails: number;
  assignments: number;
  /** Policy documents written (a workspace's or the account's). */
  policies: number;
  credits: number;
}

/** Who an import's writes are attributed to in the audit log. */
export const IMPORT_ORIGIN: AuditOrigin = {
  actor: { keyHash: "", label: "railgate config import", name: "railgate config import (CLI)" },
};

function note(
  action: string,
  type: AuditNote["entry"]["resource"]["type"],
  id: string,
  workspaceId: string | null,
): AuditNote {
  return {
    origin: IMPORT_ORIGIN,
    entry: { action, resource: { type, id, label: "imported" }, workspaceId, changes: {} },
  };
}

/**
 * Writes a checked file into the store, object by object and idempotently: what exists and is
 * equal is left alone, what differs is updated, what is missing is created with its own id (a
 * key with its own hash, so the secrets already handed out keep working). Guardrails are
 * compared field by field and written as a patch; their versions count on from the store's.
 */
export async function importConfig(store: Store, file: ConfigFile): Promise<ImportCounts> {
  const counts: ImportCounts = {
    workspaces: 0,
    keys: 0,
    guardrails: 0,
    assignments: 0,
    policies: 0,
    credits: 0,
  };
  const workspaces = file.workspaces.map((w) => fromJson(WorkspaceSchema, w));
  const defaultWs = workspaces.find((w) => w.id === file.default_workspace_id);
  // Bootstrapping with the file's default makes it the default of a store that never had one.
  if (
    defaultWs &&
    (await store.defaultWorkspaceId()) === undefined &&
    !(await store.getWorkspace(defaultWs.id))
  ) {
    await store.bootstrapDefaultWorkspace(defaultWs);
    counts.workspaces++;
  }
  for (const ws of workspaces) counts.workspaces += await importWorkspace(store, ws);
  for (const g of file.guardrails.map((j) => fromJson(GuardrailSchema, j))) {
    counts.guardrails += await importGuardrail(store, g);
  }
  for (const { scope, key } of file.keys) {
    counts.keys += await importKey(store, scope, fromJson(ApiKeySchema, key));
  }
  for (const { kind, ...record } of file.assignments) {
    const result = await store.assign(
      kind,
      [record],
      note("assignment.create", "assignment", record.guardrailId, record.workspaceId),
    );
    if (typeof result === "object" && "assigned" in result) counts.assignments += result.assigned;
  }
  // Counted with the workspaces they belong to: each workspace whose members the import added.
  const byWorkspace = new Map<string, MemberRecord[]>();
  for (const m of file.members ?? []) {
    byWorkspace.set(m.workspaceId, [...(byWorkspace.get(m.workspaceId) ?? []), m]);
  }
  for (const [workspaceId, records] of byWorkspace) {
    const result = await store.addMembers(
      workspaceId,
      records,
      note("workspace.members_add", "workspace", workspaceId, workspaceId),
    );
    if (typeof result === "object" && "added" in result && result.added > 0) counts.workspaces++;
  }
  counts.policies = await importPolicyDocs(store, file.policy_docs ?? [], (scope) =>
    note(
      "guardrail_policy.import",
      "guardrail_policy",
      scope,
      scope === ACCOUNT_DOC ? null : scope,
    ),
  );
  for (const c of file.credits) {
    const current = await store.getCredits(c.workspace_id);
    const delta = c.balance_micros - (current ?? 0);
    if (current !== undefined && delta === 0) continue;
    await store.addCredits(
      c.workspace_id,
      delta,
      note("credits.add", "credits", c.workspace_id, c.workspace_id),
    );
    counts.credits++;
  }
  return counts;
}

async function importWorkspace(store: Store, ws: Workspace): Promise<number> {
  const existing = await store.getWorkspace(ws.id);
  const audit = note(existing ? "workspace.update" : "workspace.create", "workspace", ws.id, ws.id);
  if (!existing) {
    const result = await store.createWorkspace(ws, audit);
    if (result !== "ok")
      throw new Error(`workspace ${ws.id} (${ws.slug}) not imported: ${JSON.stringify(result)}`);
    return 1;
  }
  existing.isDefault = false;
  if (equals(WorkspaceSchema, existing, { ...ws, isDefault: false })) return 0;
  const result = await store.updateWorkspace(ws, existing.slug, audit);
  if (result !== "ok") throw new Error(`workspace ${ws.id} (${ws.slug}) not imported: ${result}`);
  return 1;
}

async function importGuardrail(store: Store, g: Guardrail): Promise<number> {
  const found = await store.getGuardrail(g.workspaceId, g.id);
  if (!found) {
    const result = await store.createGuardrail(
      g,
      note("guardrail.create", "guardrail", g.id, g.workspaceId),
    );
    if (result !== "ok")
      throw new Error(`guardrail ${g.id} not imported: ${JSON.stringify(result)}`);
    return 1;
  }
  const same = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));
  const differ = STORED_FIELDS.filter(
    (f) => !same(encodeField(found.value, f.number), encodeField(g, f.number)),
  ).map((f) => f.name);
  if (differ.length === 0) return 0;
  const result = await store.patchGuardrail(
    {
      workspaceId: g.workspaceId,
      id: g.id,
      readVersion: found.version,
      fields: differ,
      next: g,
      unchanged: [],
      read: found.value,
      materialize: false,
    },
    note("guardrail.update", "guardrail", g.id, g.workspaceId),
  );
  if (typeof result === "string") throw new Error(`guardrail ${g.id} not imported: ${result}`);
  return 1;
}

async function importKey(store: Store, scope: string, key: ApiKey): Promise<number> {
  const existing = await store.getKey(scope, key.hash);
  const workspaceId = scope === ORG_SCOPE ? null : scope;
  if (!existing) {
    const result = await store.createKey(
      scope,
      key,
      note("key.create", "key", key.hash, workspaceId),
    );
    if (result !== "ok") throw new Error(`key ${key.hash} not imported: ${JSON.stringify(result)}`);
    return 1;
  }
  if (equals(ApiKeySchema, { ...existing, guardrailId: "" }, key)) return 0;
  await store.putKey(scope, key, note("key.update", "key", key.hash, workspaceId));
  return 1;
}
