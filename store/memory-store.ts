import {
  clone,
  type DescMessage,
  fromBinary,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import { defaultGuardrailId, newOrderedId } from "../domain/ids.js";
import { COUNT_LIMITS, type CountLimits, membersPerWorkspace } from "../domain/limits.js";
import {
  type ApiKey,
  ApiKeySchema,
  type Workspace,
  WorkspaceSchema,
} from "../gen/railgate/account/v1/account_pb.js";
import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type Clock, systemClock } from "../platform/time.js";
import {
  type Admission,
  type AdmissionResult,
  counterId,
  type GuardrailSpend,
  type GuardrailSpendQuery,
  rateWindowIndex,
  rateWindowRemainingMs,
  SETTLED_MARKER_TTL_SECONDS,
  type Settlement,
  SPEND_TTL_SECONDS,
  type SpendWindow,
} from "./admission.js";
import { MemoryAudioClips } from "./audio-clips/memory-audio-clips.js";
import type { AudioClipStore } from "./audio-clips/types.js";
import { readDurableConfig } from "./config-outbox/durable-config.js";
import type { AuditNote, OutboxEvent, Snapshot } from "./config-outbox/entry.js";
import { ConfigJournal } from "./config-outbox/journal.js";
import {
  decodeFields,
  encodeField,
  encodeFields,
  guardrailFieldNumber,
} from "./guardrail-fields.js";
import {
  type KeyUsage,
  keyLimitByokSuffix,
  keyUsageCounters,
  keyUsageFrom,
  settlementUsage,
} from "./key-usage.js";
import type { LimitReached } from "./limits.js";
import { MemoryIdempotency } from "./memory-idempotency.js";
import { MemoryPolicyDocs } from "./policies/memory-policy-docs.js";
import type { SqlDatabase } from "./request-log/database.js";
import {
  joinedRecord,
  NOTHING_CHECKPOINTED,
  nothingServed,
  type OutboxRecord,
  type ReservationCheckpoint,
  WHOLE_RECORD,
} from "./reservations.js";
import {
  type AssignmentKind,
  type AssignmentRecord,
  type Governance,
  type GuardrailPatch,
  type IdempotentAnswer,
  type MemberRecord,
  type MembersAdded,
  ORG_SCOPE,
  type Page,
  type Store,
  type Versioned,
} from "./types.js";

/**
 * A page of what `all` yields that `keep` accepts, and their count: only the
 * page's items are copied out (the rest is counted, not cloned).
 */
function page<S, T>(
  all: Iterable<S>,
  offset: number,
  limit: number,
  out: (s: S) => T,
  keep: (s: S) => boolean = () => true,
): Page<T> {
  const items: T[] = [];
  let total = 0;
  for (const s of all) {
    if (!keep(s)) continue;
    if (total >= offset && items.length < limit) items.push(out(s));
    total++;
  }
  return { items, total };
}

/** A guardrail as the Redis store keeps it: one encoding per field (see guardrail-fields.ts). */
interface StoredGuardrail {
  fields: Map<number, Uint8Array>;
  version: number;
}

function storedGuardrail(g: Guardrail, version: number): StoredGuardrail {
  return { fields: new Map(encodeFields(g)), version };
}

function decodeGuardrail(s: StoredGuardrail): Versioned<Guardrail> {
  return { value: decodeFields(s.fields.values(), s.version), version: s.version };
}

/** A message as the Redis store stores it: only the fields the schema knows. */
function encodeMessage<D extends DescMessage>(schema: D, msg: MessageShape<D>): Uint8Array {
  return toBinary(schema, msg, { writeUnknownFields: false });
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return (a ?? new Uint8Array()).length === b.length && (a ?? b).every((x, i) => x === b[i]);
}

interface Scope {
  workspace?: Workspace;
  guardrails: Map<string, StoredGuardrail>;
  keys: Map<string, ApiKey>;
  assignments: Record<AssignmentKind, Map<string, AssignmentRecord>>;
  /** Added members by user id, in order of addition. */
  members: Map<string, MemberRecord>;
}

/** A reservation tracked for recovery, as a recovering sweep settles it. */
interface HeldReservation {
  /** The admission as recovery sees it (tracked, so that settling it removes it). */
  admission: Admission;
  metered: boolean;
  leaseUntilMs: number;
  actual?: Settlement;
  /** The record's draft from admission, and how it ends as last checkpointed. */
  draft: Uint8Array;
  ending?: Uint8Array;
}

/**
 * The embedded store: used only when no Redis is reachable. Single process,
 * so every method is atomic by construction (no await between read and write).
 * Everything is cloned in and out so callers can never mutate stored state.
 */
export class MemoryStore implements Store {
  readonly kind = "memory" as const;
  private scopes = new Map<string, Scope>([[ORG_SCOPE, this.emptyScope()]]);
  private slugs = new Map<string, string>();
  private guardrailScopes = new Map<string, string>();
  private keyScopes = new Map<string, string>();
  private defaultWs: string | undefined;
  private bootstrapped = false;

  constructor(
    private readonly limits: CountLimits = COUNT_LIMITS,
    /** Counters' expiries and settlement's usage windows: admission's clock (tests pin one). */
    private readonly clock: Clock = systemClock,
  ) {}

  private audioClips?: AudioClipStore;
  private policyDocs?: MemoryPolicyDocs;

  /** One per store, as on Redis: whoever opens it sees the same clips (the first cap holds). */
  openPolicyDocs(): MemoryPolicyDocs {
    this.policyDocs ??= new MemoryPolicyDocs(
      (scope) => this.changed(scope),
      async (scope, version, doc, audit) => {
        await this.journal?.write(scope, audit, [{ type: "policies", version, doc }]);
      },
    );
    return this.policyDocs;
  }

  /** Whether the workspace's policy document moved past the version a write was decided under. */
  private policyDocMoved(workspaceId: string, expected: number | undefined): boolean {
    return expected !== undefined && this.openPolicyDocs().versionOf(workspaceId) !== expected;
  }

  openAudioClips(options: { memoryBytes: number }): AudioClipStore {
    this.audioClips ??= new MemoryAudioClips(options.memoryBytes);
    return this.audioClips;
  }

  private emptyScope(workspace?: Workspace): Scope {
    return {
      workspace,
      guardrails: new Map(),
      keys: new Map(),
      assignments: { key: new Map(), member: new Map() },
      members: new Map(),
    };
  }

  private journal?: ConfigJournal;
  private journalDb?: SqlDatabase;

  get recordsAudit(): boolean {
    return this.journal !== undefined;
  }

  /** One process: each write's audit event and snapshots reach the database before it answers. */
  attachConfigLog(db: SqlDatabase): void {
    this.journal ??= new ConfigJournal(db);
    this.journalDb = db;
  }

  /**
   * At start: an embedded store is empty, so whatever the database holds is brought back (the
   * configuration survives a restart of `npm start`), with its default workspace.
   */
  async restoreConfig(): Promise<void> {
    const db = this.journalDb;
    if (!db || this.scopes.size > 1 || this.bootstrapped) return;
    const config = await readDurableConfig(db, new Date(this.clock.now()));
    for (const w of config.workspaces) {
      const ws = fromBinary(WorkspaceSchema, w.data);
      this.slugs.set(ws.slug, ws.id);
      this.scopes.set(ws.id, this.emptyScope(ws));
      this.guardrailScopes.set(defaultGuardrailId(ws.id), ws.id);
    }
    for (const g of config.guardrails) {
      const scope = this.scopes.get(g.workspaceId);
      if (!scope) continue;
      scope.guardrails.set(g.id, storedGuardrail(decodeFields([g.data], g.version), g.version));
      this.guardrailScopes.set(g.id, g.workspaceId);
    }
    for (const k of config.keys) {
      const scope = this.scopes.get(k.scope);
      if (!scope) continue;
      scope.keys.set(k.hash, fromBinary(ApiKeySchema, k.data));
      this.keyScopes.set(k.hash, k.scope);
    }
    for (const a of config.assignments) {
      this.scopes
        .get(a.workspaceId)
        ?.assignments[a.kind].set(a.subject, JSON.parse(a.record) as AssignmentRecord);
    }
    for (const r of config.members) {
      const m = JSON.parse(r.record) as MemberRecord;
      this.scopes.get(m.workspaceId)?.members.set(m.userId, m);
    }
    this.openPolicyDocs().load(config.policyDocs);
    for (const c of config.credits) {
      this.bump(`${c.workspaceId}/credits-added`, c.addedMicros);
      this.bump(`${c.workspaceId}/credits`, c.addedMicros - c.spentMicros);
    }
    for (const u of config.usage) {
      if (u.creditTotalMicros > 0)
        this.bump(`${u.workspaceId}/keyspend/${u.keyHash}`, u.creditTotalMicros);
      if (u.byokTotalMicros > 0)
        this.bump(`${u.workspaceId}/keyusage:${u.keyHash}:byok:total`, u.byokTotalMicros);
      for (const w of u.windows) {
        for (const [stem, amount] of [
          ["credit", w.creditMicros],
          ["byok", w.byokMicros],
        ] as const) {
          if (amount > 0)
            this.bump(
              `${u.workspaceId}/keyusage:${u.keyHash}:${stem}:${w.id}`,
              amount,
              w.ttlSeconds * 1000,
            );
        }
      }
    }
    if (config.defaultWorkspace !== undefined) {
      this.bootstrapped = true;
      this.defaultWs = config.defaultWorkspace || undefined;
    }
  }

  private workspaceSnapshot(id: string): Snapshot {
    const ws = this.scopes.get(id)?.workspace;
    return { type: "workspace", id, data: ws && encodeMessage(WorkspaceSchema, ws) };
  }

  private guardrailSnapshot(workspaceId: string, id: string): Snapshot {
    const g = this.scopes.get(workspaceId)?.guardrails.get(id);
    return {
      type: "guardrail",
      id,
      version: g?.version ?? 0,
      data: g && Buffer.concat([...g.fields.values()]),
    };
  }

  private keySnapshot(scope: string, hash: string): Snapshot {
    const k = this.scopes.get(scope)?.keys.get(hash);
    return { type: "key", hash, data: k && encodeMessage(ApiKeySchema, { ...k, guardrailId: "" }) };
  }

  private assignmentSnapshot(kind: AssignmentKind, workspaceId: string, subject: string): Snapshot {
    const a = this.scopes.get(workspaceId)?.assignments[kind].get(subject);
    return { type: "assignment", kind, subject, record: a && JSON.stringify(a) };
  }

  private memberSnapshot(workspaceId: string, userId: string): Snapshot {
    const m = this.scopes.get(workspaceId)?.members.get(userId);
    return { type: "member", userId, record: m && JSON.stringify(m) };
  }

  async close(): Promise<void> {}

  async ping(): Promise<void> {}

  private readonly listeners = new Set<(scope: string) => void>();

  /** Delivered asynchronously, like a Redis message, so callers never rely on ordering. */
  private changed(scope: string): void {
    queueMicrotask(() => {
      for (const l of this.listeners) l(scope);
    });
  }

  onInvalidate(listener: (scope: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async bootstrapDefaultWorkspace(candidate: Workspace): Promise<string | undefined> {
    if (!this.bootstrapped) {
      this.bootstrapped = true;
      this.defaultWs = candidate.id;
      await this.createWorkspaceWith(candidate, undefined, { defaultWorkspace: candidate.id });
    }
    return this.defaultWs;
  }

  async defaultWorkspaceId(): Promise<string | undefined> {
    return this.defaultWs;
  }

  createWorkspace(ws: Workspace, audit?: AuditNote): Promise<"ok" | "slug-taken" | LimitReached> {
    return this.createWorkspaceWith(ws, audit, {});
  }

  private async createWorkspaceWith(
    ws: Workspace,
    audit: AuditNote | undefined,
    extra: OutboxEvent,
  ): Promise<"ok" | "slug-taken" | LimitReached> {
    // Every scope but the organization's is a workspace.
    const count = this.scopes.size - 1;
    if (count >= this.limits.workspaces) return { limit: this.limits.workspaces, count, adding: 1 };
    if (this.slugs.has(ws.slug)) return "slug-taken";
    this.slugs.set(ws.slug, ws.id);
    this.scopes.set(ws.id, this.emptyScope(clone(WorkspaceSchema, ws)));
    this.guardrailScopes.set(defaultGuardrailId(ws.id), ws.id);
    this.changed(ws.id);
    await this.journal?.write(ws.id, audit, [this.workspaceSnapshot(ws.id)], extra);
    return "ok";
  }

  async getWorkspace(id: string): Promise<Workspace | undefined> {
    const ws = this.scopes.get(id)?.workspace;
    return ws && clone(WorkspaceSchema, ws);
  }

  async workspaceIdBySlug(slug: string): Promise<string | undefined> {
    return this.slugs.get(slug);
  }

  async listWorkspaces(offset: number, limit: number): Promise<Page<Workspace>> {
    return page(
      this.scopes.values(),
      offset,
      limit,
      (s) => clone(WorkspaceSchema, s.workspace as Workspace),
      (s) => s.workspace !== undefined,
    );
  }

  async updateWorkspace(
    ws: Workspace,
    previousSlug: string,
    audit?: AuditNote,
  ): Promise<"ok" | "slug-taken" | "missing"> {
    const scope = this.scopes.get(ws.id);
    if (!scope?.workspace) return "missing";
    if (ws.slug !== previousSlug) {
      if (this.slugs.has(ws.slug)) return "slug-taken";
      this.slugs.delete(previousSlug);
      this.slugs.set(ws.slug, ws.id);
    }
    scope.workspace = clone(WorkspaceSchema, ws);
    this.changed(ws.id);
    await this.journal?.write(ws.id, audit, [this.workspaceSnapshot(ws.id)]);
    return "ok";
  }

  async deleteWorkspace(
    id: string,
    audit?: AuditNote,
  ): Promise<"ok" | "missing" | { activeKeys: number }> {
    const scope = this.scopes.get(id);
    if (!scope?.workspace) return "missing";
    const activeKeys = [...scope.keys.values()].filter((k) => !k.disabled).length;
    if (activeKeys > 0) return { activeKeys };
    this.slugs.delete(scope.workspace.slug);
    for (const g of scope.guardrails.keys()) this.guardrailScopes.delete(g);
    this.guardrailScopes.delete(defaultGuardrailId(id));
    for (const k of scope.keys.keys()) this.keyScopes.delete(k);
    this.scopes.delete(id);
    this.policyDocs?.forget(id);
    if (this.defaultWs === id) this.defaultWs = undefined;
    this.changed(id);
    await this.journal?.write(id, audit, [this.workspaceSnapshot(id)]);
    return "ok";
  }

  async guardrailWorkspace(id: string): Promise<string | undefined> {
    return this.guardrailScopes.get(id);
  }

  async getGuardrail(workspaceId: string, id: string): Promise<Versioned<Guardrail> | undefined> {
    const stored = this.scopes.get(workspaceId)?.guardrails.get(id);
    return stored && decodeGuardrail(stored);
  }

  async readGuardrail(
    workspaceId: string,
    id: string,
  ): Promise<Versioned<Readonly<Guardrail>> | undefined> {
    return this.getGuardrail(workspaceId, id);
  }

  async createGuardrail(
    g: Guardrail,
    audit?: AuditNote,
    policyDocVersion?: number,
  ): Promise<"ok" | "exists" | "missing-workspace" | "conflict" | LimitReached> {
    const scope = this.scopes.get(g.workspaceId);
    if (!scope?.workspace) return "missing-workspace";
    if (scope.guardrails.has(g.id)) return "exists";
    if (this.policyDocMoved(g.workspaceId, policyDocVersion)) return "conflict";
    const defaultId = defaultGuardrailId(g.workspaceId);
    if (g.id !== defaultId) {
      const count = scope.guardrails.size - (scope.guardrails.has(defaultId) ? 1 : 0);
      const limit = this.limits.guardrailsPerWorkspace;
      if (count >= limit) return { limit, count, adding: 1 };
    }
    scope.guardrails.set(g.id, storedGuardrail(g, 1));
    this.guardrailScopes.set(g.id, g.workspaceId);
    this.openPolicyDocs().guardrailWritten(g.workspaceId);
    this.changed(g.workspaceId);
    await this.journal?.write(g.workspaceId, audit, [this.guardrailSnapshot(g.workspaceId, g.id)]);
    return "ok";
  }

  async patchGuardrail(
    p: GuardrailPatch,
    audit?: AuditNote,
  ): Promise<Versioned<Guardrail> | "conflict" | "missing"> {
    const scope = this.scopes.get(p.workspaceId);
    let stored = scope?.guardrails.get(p.id);
    // Checked, like the rest, before anything changes and with no await in between (as one step).
    if (this.policyDocMoved(p.workspaceId, p.policyDocVersion)) return "conflict";
    if (!stored) {
      // Deleted since it was read: the caller re-reads (404, or a fresh default).
      if (p.readVersion > 0) return "conflict";
      if (!p.materialize || !scope?.workspace) return "missing";
      stored = storedGuardrail(p.next, 1);
      scope.guardrails.set(p.id, stored);
      this.openPolicyDocs().guardrailWritten(p.workspaceId);
      this.changed(p.workspaceId);
      const created = decodeGuardrail(stored);
      await this.journal?.write(p.workspaceId, audit, [
        this.guardrailSnapshot(p.workspaceId, p.id),
      ]);
      return created;
    }
    for (const name of p.unchanged) {
      const n = guardrailFieldNumber(name);
      if (!sameBytes(stored.fields.get(n), encodeField(p.read, n))) return "conflict";
    }
    for (const name of p.fields) {
      const n = guardrailFieldNumber(name);
      const bytes = encodeField(p.next, n);
      if (bytes.length === 0) stored.fields.delete(n);
      else stored.fields.set(n, bytes);
    }
    stored.version++;
    this.openPolicyDocs().guardrailWritten(p.workspaceId);
    this.changed(p.workspaceId);
    const patchedGuardrail = decodeGuardrail(stored);
    await this.journal?.write(p.workspaceId, audit, [this.guardrailSnapshot(p.workspaceId, p.id)]);
    return patchedGuardrail;
  }

  async deleteGuardrail(workspaceId: string, id: string, audit?: AuditNote): Promise<boolean> {
    const scope = this.scopes.get(workspaceId);
    if (!scope?.guardrails.delete(id)) return false;
    // A workspace default reverts to unconfigured; its id stays resolvable.
    if (id !== defaultGuardrailId(workspaceId)) this.guardrailScopes.delete(id);
    for (const map of Object.values(scope.assignments)) {
      for (const [subject, a] of map) if (a.guardrailId === id) map.delete(subject);
    }
    this.openPolicyDocs().guardrailWritten(workspaceId);
    this.changed(workspaceId);
    await this.journal?.write(workspaceId, audit, [this.guardrailSnapshot(workspaceId, id)]);
    return true;
  }

  async listGuardrails(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Guardrail>> {
    const scopes =
      workspaceId === undefined ? [...this.scopes.values()] : [this.scopes.get(workspaceId)];
    return page(
      scopes.flatMap((s) => (s ? [...s.guardrails.values()] : [])),
      offset,
      limit,
      (g) => decodeGuardrail(g).value,
    );
  }

  async createKey(
    scope: string,
    key: ApiKey,
    audit?: AuditNote,
  ): Promise<"ok" | "missing-workspace" | "exists" | LimitReached> {
    const s = this.scopes.get(scope);
    if (!s) return "missing-workspace";
    if (this.keyScopes.has(key.hash)) return "exists";
    const limit = scope === ORG_SCOPE ? this.limits.managementKeys : this.limits.keysPerWorkspace;
    if (s.keys.size >= limit) return { limit, count: s.keys.size, adding: 1 };
    s.keys.set(key.hash, clone(ApiKeySchema, key));
    this.keyScopes.set(key.hash, scope);
    this.changed(scope);
    await this.journal?.write(scope, audit, [this.keySnapshot(scope, key.hash)]);
    return "ok";
  }

  async keyScope(hash: string): Promise<string | undefined> {
    return this.keyScopes.get(hash);
  }

  async getKey(scope: string, hash: string): Promise<ApiKey | undefined> {
    const k = this.scopes.get(scope)?.keys.get(hash);
    if (!k) return undefined;
    const out = clone(ApiKeySchema, k);
    out.guardrailId = this.scopes.get(scope)?.assignments.key.get(hash)?.guardrailId ?? "";
    return out;
  }

  async putKey(scope: string, key: ApiKey, audit?: AuditNote): Promise<boolean> {
    const s = this.scopes.get(scope);
    if (!s?.keys.has(key.hash)) return false;
    const stored = clone(ApiKeySchema, key);
    stored.guardrailId = "";
    s.keys.set(key.hash, stored);
    this.changed(scope);
    await this.journal?.write(scope, audit, [this.keySnapshot(scope, key.hash)]);
    return true;
  }

  async deleteKey(scope: string, hash: string, audit?: AuditNote): Promise<boolean> {
    const s = this.scopes.get(scope);
    if (!s?.keys.delete(hash)) return false;
    s.assignments.key.delete(hash);
    this.keyScopes.delete(hash);
    this.changed(scope);
    await this.journal?.write(scope, audit, [this.keySnapshot(scope, hash)]);
    return true;
  }

  async listKeys(
    scope: string | undefined,
    offset: number,
    limit: number,
    enabledOnly = false,
  ): Promise<Page<ApiKey>> {
    const names = scope === undefined ? [...this.scopes.keys()] : [scope];
    const all = names.flatMap((name) =>
      [...(this.scopes.get(name)?.keys.values() ?? [])].map((key) => ({ name, key })),
    );
    return page(
      all,
      offset,
      limit,
      ({ name, key }) => {
        const out = clone(ApiKeySchema, key);
        out.guardrailId = this.scopes.get(name)?.assignments.key.get(key.hash)?.guardrailId ?? "";
        return out;
      },
      ({ key }) => !enabledOnly || !key.disabled,
    );
  }

  async assign(
    kind: AssignmentKind,
    records: AssignmentRecord[],
    audit?: AuditNote,
  ): Promise<{ assigned: number } | "missing" | LimitReached> {
    const first = records[0];
    if (!first) return { assigned: 0 };
    const scope = this.scopes.get(first.workspaceId);
    if (!scope?.guardrails.has(first.guardrailId)) return "missing";
    const map = scope.assignments[kind];
    const todo = [...new Map(records.map((r) => [r.subject, r])).values()].filter(
      // Like the Redis script: a key deleted meanwhile is skipped, not resurrected.
      (r) =>
        (kind !== "key" || scope.keys.has(r.subject)) &&
        map.get(r.subject)?.guardrailId !== r.guardrailId,
    );
    const adding = todo.filter((r) => !map.has(r.subject)).length;
    const limit =
      kind === "key"
        ? this.limits.keyAssignmentsPerWorkspace
        : this.limits.memberAssignmentsPerWorkspace;
    if (adding > 0 && map.size + adding > limit) return { limit, count: map.size, adding };
    for (const r of todo) {
      // Re-inserted, so the map's order stays the order of assignment, as in the Redis index.
      map.delete(r.subject);
      map.set(r.subject, { ...r });
    }
    if (todo.length > 0) {
      this.openPolicyDocs().guardrailWritten(first.workspaceId);
      this.changed(first.workspaceId);
      await this.journal?.write(
        first.workspaceId,
        audit,
        todo.map((r) => this.assignmentSnapshot(kind, first.workspaceId, r.subject)),
      );
    }
    return { assigned: todo.length };
  }

  async unassign(
    kind: AssignmentKind,
    workspaceId: string,
    guardrailId: string,
    subjects: string[],
    audit?: AuditNote,
  ): Promise<number> {
    const map = this.scopes.get(workspaceId)?.assignments[kind];
    let n = 0;
    for (const s of new Set(subjects)) {
      if (map?.get(s)?.guardrailId === guardrailId) {
        map.delete(s);
        n++;
      }
    }
    if (n > 0) {
      this.openPolicyDocs().guardrailWritten(workspaceId);
      this.changed(workspaceId);
      await this.journal?.write(
        workspaceId,
        audit,
        [...new Set(subjects)].map((s) => this.assignmentSnapshot(kind, workspaceId, s)),
      );
    }
    return n;
  }

  async addMembers(
    workspaceId: string,
    records: MemberRecord[],
    audit?: AuditNote,
  ): Promise<MembersAdded | "missing" | LimitReached> {
    const scope = this.scopes.get(workspaceId);
    if (!scope?.workspace) return "missing";
    const unique = [...new Map(records.map((r) => [r.userId, r])).values()];
    const todo = unique.filter((r) => !scope.members.has(r.userId));
    const limit = membersPerWorkspace(this.limits);
    const count = scope.members.size;
    if (todo.length > 0 && count + todo.length > limit)
      return { limit, count, adding: todo.length };
    for (const r of todo) scope.members.set(r.userId, { ...r });
    if (todo.length > 0) {
      await this.journal?.write(
        workspaceId,
        audit,
        todo.map((r) => this.memberSnapshot(workspaceId, r.userId)),
      );
    }
    const members = unique.flatMap((r) => {
      const m = scope.members.get(r.userId);
      return m ? [{ ...m }] : [];
    });
    return { added: todo.length, members };
  }

  async removeMembers(workspaceId: string, userIds: string[], audit?: AuditNote): Promise<number> {
    const members = this.scopes.get(workspaceId)?.members;
    const gone = [...new Set(userIds)].filter((u) => members?.delete(u));
    if (gone.length > 0) {
      await this.journal?.write(
        workspaceId,
        audit,
        gone.map((u) => this.memberSnapshot(workspaceId, u)),
      );
    }
    return gone.length;
  }

  async listMembers(workspaceId: string): Promise<MemberRecord[]> {
    return [...(this.scopes.get(workspaceId)?.members.values() ?? [])]
      .map((m) => ({ ...m }))
      .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.userId < b.userId ? -1 : 1));
  }

  async getAssignment(
    kind: AssignmentKind,
    workspaceId: string,
    subject: string,
  ): Promise<AssignmentRecord | undefined> {
    const a = this.scopes.get(workspaceId)?.assignments[kind].get(subject);
    return a && { ...a };
  }

  async listAssignments(
    kind: AssignmentKind,
    workspaceId: string | undefined,
    guardrailId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<AssignmentRecord>> {
    const scopes =
      workspaceId === undefined ? [...this.scopes.values()] : [this.scopes.get(workspaceId)];
    // Per workspace, by time then subject: the order of the Redis indexes.
    const all = scopes.flatMap((s) =>
      s
        ? [...s.assignments[kind].values()].sort(
            (a, b) =>
              a.createdAtMs - b.createdAtMs ||
              (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0),
          )
        : [],
    );
    return page(
      all,
      offset,
      limit,
      (a) => ({ ...a }),
      (a) => guardrailId === undefined || a.guardrailId === guardrailId,
    );
  }

  async loadGovernance(hash: string): Promise<Governance | undefined> {
    const scopeName = this.keyScopes.get(hash);
    if (scopeName === undefined) return undefined;
    const scope = this.scopes.get(scopeName);
    const key = await this.getKey(scopeName, hash);
    if (!scope || !key) return undefined;
    const get = (id: string | undefined) => {
      const v = id === undefined ? undefined : scope.guardrails.get(id);
      return v && decodeGuardrail(v).value;
    };
    return {
      key,
      keyGuardrail: get(scope.assignments.key.get(hash)?.guardrailId),
      memberGuardrail: key.memberUserId
        ? get(scope.assignments.member.get(key.memberUserId)?.guardrailId)
        : undefined,
      defaultGuardrail: scopeName === ORG_SCOPE ? undefined : get(defaultGuardrailId(scopeName)),
    };
  }

  /** Counters with optional expiry, mirroring the Redis keys the Lua scripts use. */
  private counters = new Map<string, { value: number; expiresAt: number }>();

  private counter(key: string): number {
    const c = this.counters.get(key);
    if (c && c.expiresAt <= this.clock.now()) {
      this.counters.delete(key);
      return 0;
    }
    return c?.value ?? 0;
  }

  private bump(key: string, by: number, ttlMs?: number): number {
    const now = this.clock.now();
    // Rate windows leave one expired counter per key and minute behind: sweep them now and then.
    if (this.counters.size > 10_000 && this.counters.size % 1_000 === 0) {
      for (const [k, c] of this.counters) if (c.expiresAt <= now) this.counters.delete(k);
    }
    const c = this.counters.get(key);
    const live = c && c.expiresAt > now ? c : undefined;
    const next = {
      value: (live?.value ?? 0) + by,
      expiresAt: live?.expiresAt ?? Number.POSITIVE_INFINITY,
    };
    if (ttlMs !== undefined && (!live || live.expiresAt === Number.POSITIVE_INFINITY))
      next.expiresAt = now + ttlMs;
    this.counters.set(key, next);
    return next.value;
  }

  private has(key: string): boolean {
    const c = this.counters.get(key);
    return c !== undefined && c.expiresAt > this.clock.now();
  }

  /** One entity's spend under one guardrail on one UTC day (Redis keeps the days in one hash). */
  private spendKey(scope: string, c: { guardrailId: string; entity: string }, day: number) {
    return `${scope}/spend/${counterId(c)}/${day}`;
  }

  /** Each scope's budget counters by id, with the day last charged (Redis: the spend index). */
  private readonly spendIndexes = new Map<
    string,
    Map<string, { guardrailId: string; entity: string; lastCharged: number }>
  >();

  private spendIndex(scope: string) {
    let index = this.spendIndexes.get(scope);
    if (!index) {
      index = new Map();
      this.spendIndexes.set(scope, index);
    }
    return index;
  }

  private windowSpent(scope: string, w: SpendWindow): number {
    let spent = 0;
    for (let day = w.firstDay; day <= w.lastDay; day++)
      spent += this.counter(this.spendKey(scope, w, day));
    return spent;
  }

  async admit(a: Admission): Promise<AdmissionResult> {
    const rateKey = a.rate ? `${a.scope}/rate/${a.keyHash}/${rateWindowIndex(a.rate)}` : "";
    if (a.rate && this.counter(rateKey) >= a.rate.limit) {
      const c = this.counters.get(rateKey);
      return {
        ok: false,
        reason: "rate-limit",
        retryAfterMs: Math.max(0, (c?.expiresAt ?? 0) - this.clock.now()),
      };
    }
    const creditKey = `${a.scope}/credits`;
    const metered = this.has(creditKey);
    if (metered && a.creditMicros > 0 && this.counter(creditKey) < a.creditMicros) {
      return { ok: false, reason: "credits", balanceMicros: this.counter(creditKey) };
    }
    // A request that costs a counter nothing (free or BYOK) cannot exceed it.
    for (const b of a.budgets) {
      if (b.amountMicros <= 0) continue;
      const spent = this.windowSpent(a.scope, { ...b, lastDay: b.day });
      if (spent >= b.limitMicros || spent + b.amountMicros > b.limitMicros) {
        return {
          ok: false,
          reason: "budget",
          guardrailId: b.guardrailId,
          entity: b.entity,
          spentMicros: spent,
        };
      }
    }
    const keySpend = `${a.scope}/keyspend/${a.keyHash}`;
    // A limit with limit_reset is checked on its window's spend, an all-time one on all of it.
    const keyWindow = a.keyLimitWindow && `${a.scope}/${a.keyLimitWindow.suffix}`;
    if (a.keyLimitMicros !== undefined && a.keyMicros > 0) {
      const spent =
        this.counter(keyWindow ?? keySpend) +
        (a.keyLimitIncludesByok
          ? this.counter(`${a.scope}/${keyLimitByokSuffix(a.keyHash, a.keyLimitWindow)}`)
          : 0);
      if (spent >= a.keyLimitMicros || spent + a.keyMicros > a.keyLimitMicros) {
        return { ok: false, reason: "key-limit", spentMicros: spent };
      }
    }
    if (a.rate) this.bump(rateKey, 1, rateWindowRemainingMs(a.rate));
    if (metered && a.creditMicros > 0) this.bump(creditKey, -a.creditMicros);
    if (a.keyMicros > 0) this.bump(keySpend, a.keyMicros);
    if (keyWindow && a.keyMicros > 0)
      this.bump(keyWindow, a.keyMicros, (a.keyLimitWindow?.ttlSeconds ?? 0) * 1000);
    for (const b of a.budgets) {
      if (b.amountMicros <= 0) continue;
      const key = this.spendKey(a.scope, b, b.day);
      this.bump(key, b.amountMicros);
      const index = this.spendIndex(a.scope);
      const last = index.get(counterId(b))?.lastCharged ?? b.day;
      index.set(counterId(b), {
        guardrailId: b.guardrailId,
        entity: b.entity,
        lastCharged: Math.max(last, b.day),
      });
      // Like EXPIRE on the Redis hash: every charge renews the counter's lifetime.
      const c = this.counters.get(key);
      if (c) c.expiresAt = this.clock.now() + SPEND_TTL_SECONDS * 1000;
    }
    if (a.recovery && a.id)
      this.scopeMap(this.reservations, a.scope).set(a.id, {
        // The caller's admission is never changed after admission: kept as is (no copy).
        admission: a,
        metered,
        leaseUntilMs: a.recovery.leaseUntilMs,
        draft: a.recovery.record,
      });
    return a.rate ? { ok: true, metered, rateUsed: this.counter(rateKey) } : { ok: true, metered };
  }

  /** Tracked reservations per scope (the Redis store's `resv*` keys). */
  private readonly reservations = new Map<string, Map<string, HeldReservation>>();
  /** Settled records per scope not yet known to be in the request log (`outbox*`). */
  private readonly outbox = new Map<string, Map<string, { record: Uint8Array; atMs: number }>>();

  private scopeMap<V>(maps: Map<string, Map<string, V>>, scope: string): Map<string, V> {
    let m = maps.get(scope);
    if (!m) {
      m = new Map();
      maps.set(scope, m);
    }
    return m;
  }

  async settle(
    a: Admission,
    actual: Settlement,
    metered: boolean,
    record?: Uint8Array,
  ): Promise<boolean> {
    let draft: Uint8Array = new Uint8Array();
    if (a.recovery && a.id) {
      // Settled already by a recovering sweep (or a repeat): the reservation is gone.
      const held = this.reservations.get(a.scope)?.get(a.id);
      if (!held) return false;
      this.reservations.get(a.scope)?.delete(a.id);
      draft = held.draft;
    }
    if (a.id) {
      const marker = `${a.scope}/settled/${a.id}`;
      if (this.has(marker)) return false;
      this.bump(marker, 1, SETTLED_MARKER_TTL_SECONDS * 1000);
    }
    if (record && record.byteLength > 0 && a.id)
      this.scopeMap(this.outbox, a.scope).set(a.id, {
        record: record[0] === WHOLE_RECORD ? record.slice() : joinedRecord(draft, record),
        atMs: this.clock.now(),
      });
    const creditKey = `${a.scope}/credits`;
    if (metered && this.has(creditKey)) this.bump(creditKey, a.creditMicros - actual.creditMicros);
    this.bump(`${a.scope}/keyspend/${a.keyHash}`, actual.keyMicros - a.keyMicros);
    const usage = settlementUsage(
      a.keyHash,
      a.keyLimitWindow,
      a.keyMicros,
      actual.keyMicros,
      actual.byokMicros ?? 0,
      new Date(this.clock.now()),
    );
    for (const c of usage) {
      const key = `${a.scope}/${c.suffix}`;
      if (c.delta) {
        // The reservation's own window counter, while it lives (as on Redis).
        if (c.amountMicros !== 0 && this.has(key)) this.bump(key, c.amountMicros);
      } else if (c.amountMicros > 0) {
        this.bump(key, c.amountMicros, c.ttlSeconds ? c.ttlSeconds * 1000 : undefined);
      }
    }
    const real = new Map(actual.budgets.map((b) => [counterId(b), b.amountMicros]));
    for (const b of a.budgets) {
      // The reservation's own day, even if the stream ended after midnight.
      const key = this.spendKey(a.scope, b, b.day);
      const delta = (real.get(counterId(b)) ?? 0) - b.amountMicros;
      if (delta !== 0 && this.has(key)) this.bump(key, delta);
    }
    return true;
  }

  async keepReservations(scope: string, checkpoints: ReservationCheckpoint[]): Promise<number> {
    const held = this.reservations.get(scope);
    let kept = 0;
    for (const c of checkpoints) {
      const r = held?.get(c.admissionId);
      if (!r) continue;
      r.leaseUntilMs = c.leaseUntilMs;
      if (c.progress) {
        r.actual = structuredClone(c.progress.actual);
        r.ending = c.progress.record.slice();
      }
      kept++;
    }
    return kept;
  }

  async recoverReservations(nowMs: number, max: number): Promise<number> {
    let settled = 0;
    for (const held of this.reservations.values()) {
      const expired = [...held.values()]
        .filter((r) => r.leaseUntilMs <= nowMs)
        .sort((x, y) => x.leaseUntilMs - y.leaseUntilMs)
        .slice(0, max);
      for (const r of expired) {
        const actual = r.actual ?? nothingServed(r.admission);
        const ending = r.ending ?? NOTHING_CHECKPOINTED;
        if (await this.settle(r.admission, actual, r.metered, ending)) settled++;
      }
    }
    return settled;
  }

  async reservationLeases(scope: string): Promise<{ id: string; leaseUntilMs: number }[]> {
    return [...(this.reservations.get(scope)?.entries() ?? [])]
      .map(([id, r]) => ({ id, leaseUntilMs: r.leaseUntilMs }))
      .sort((x, y) => x.leaseUntilMs - y.leaseUntilMs);
  }

  async outboxRecords(beforeMs: number, max: number): Promise<OutboxRecord[]> {
    const out: OutboxRecord[] = [];
    for (const [scope, records] of this.outbox) {
      for (const [id, r] of records) {
        if (out.length >= max) return out;
        if (r.atMs < beforeMs) out.push({ scope, id, record: r.record.slice() });
      }
    }
    return out;
  }

  async outboxDone(scope: string, ids: string[]): Promise<void> {
    const records = this.outbox.get(scope);
    for (const id of ids) records?.delete(id);
  }

  async getCredits(scope: string): Promise<number | undefined> {
    const key = `${scope}/credits`;
    return this.has(key) ? this.counter(key) : undefined;
  }

  async addCredits(scope: string, micros: number, audit?: AuditNote): Promise<number> {
    const wasMetered = this.has(`${scope}/credits`);
    this.bump(`${scope}/credits-added`, micros);
    const balance = this.bump(`${scope}/credits`, micros);
    const at = new Date().toISOString();
    await this.journal?.write(
      scope,
      audit,
      [],
      { credits: { id: newOrderedId(), workspaceId: scope, amountMicros: micros, at } },
      [balance, wasMetered ? 1 : 0],
    );
    return balance;
  }

  async addCreditsOnce(
    scope: string,
    micros: number,
    onceId: string,
    ttlSeconds: number,
    audit?: AuditNote,
  ): Promise<{ balanceMicros: number; applied: boolean }> {
    const marker = `${scope}/credits-idem/${onceId}`;
    if (this.has(marker))
      return { balanceMicros: this.counter(`${scope}/credits`), applied: false };
    this.bump(marker, 1, ttlSeconds * 1000);
    return { balanceMicros: await this.addCredits(scope, micros, audit), applied: true };
  }

  private idempotencyRecords?: MemoryIdempotency;

  private get idempotency(): MemoryIdempotency {
    this.idempotencyRecords ??= new MemoryIdempotency(this.clock);
    return this.idempotencyRecords;
  }

  claimIdempotency(id: string, fingerprint: string, claimSeconds: number) {
    return this.idempotency.claimIdempotency(id, fingerprint, claimSeconds);
  }

  completeIdempotency(id: string, token: string, answer: IdempotentAnswer, ttlSeconds: number) {
    return this.idempotency.completeIdempotency(id, token, answer, ttlSeconds);
  }

  releaseIdempotency(id: string, token: string) {
    return this.idempotency.releaseIdempotency(id, token);
  }

  async getCreditsAdded(scope: string): Promise<number> {
    return this.counter(`${scope}/credits-added`);
  }

  async getKeyUsage(scope: string, keyHash: string, now: Date): Promise<KeyUsage> {
    return keyUsageFrom(
      this.counter(`${scope}/keyspend/${keyHash}`),
      keyUsageCounters(keyHash, now).map((c) => this.counter(`${scope}/${c.suffix}`)),
    );
  }

  async getSpend(scope: string, windows: SpendWindow[]): Promise<number[]> {
    return windows.map((w) => this.windowSpent(scope, w));
  }

  async getGuardrailSpend(
    scope: string,
    queries: GuardrailSpendQuery[],
  ): Promise<GuardrailSpend[]> {
    const counters = [...(this.spendIndexes.get(scope)?.values() ?? [])];
    return queries.map((q) => {
      const out: GuardrailSpend = {
        keyMicros: 0,
        memberMicros: 0,
        maxEntityMicros: 0,
        entities: 0,
      };
      for (const c of counters) {
        if (c.guardrailId !== q.guardrailId || c.lastCharged < q.firstDay) continue;
        const spent = this.windowSpent(scope, { ...c, firstDay: q.firstDay, lastDay: q.lastDay });
        if (spent <= 0) continue;
        if (c.entity.startsWith("key:")) out.keyMicros += spent;
        else out.memberMicros += spent;
        out.maxEntityMicros = Math.max(out.maxEntityMicros, spent);
        out.entities++;
      }
      return out;
    });
  }
}
