import { randomUUID } from "node:crypto";
import { type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import type { Cluster, Redis } from "ioredis";
import { defaultGuardrailId, newOrderedId } from "../domain/ids.js";
import { COUNT_LIMITS, type CountLimits, membersPerWorkspace } from "../domain/limits.js";
import {
  type ApiKey,
  ApiKeySchema,
  type Workspace,
  WorkspaceSchema,
} from "../gen/railgate/account/v1/account_pb.js";
import { type Guardrail, GuardrailSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
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
  SPEND_DAYS_KEPT,
  SPEND_TTL_SECONDS,
  type SpendWindow,
} from "./admission.js";
import { RedisAudioClips } from "./audio-clips/redis-audio-clips.js";
import type { AudioClipStore } from "./audio-clips/types.js";
import { ConfigOutboxDrainer } from "./config-outbox/drainer.js";
import type { AuditNote, OutboxEvent, SnapshotSpec } from "./config-outbox/entry.js";
import { RedisConfigRefiller, warnWithoutPersistence } from "./config-outbox/redis-refiller.js";
import { DecodedGuardrails } from "./decoded-guardrails.js";
import { GroupCommit } from "./group-commit.js";
import {
  decodeFields,
  encodeField,
  encodeFields,
  guardrailFieldNumber,
} from "./guardrail-fields.js";
import {
  type KeyUsage,
  keyUsageCounters,
  keyUsageFrom,
  type UsageCounter,
  usageWindows,
} from "./key-usage.js";
import type { LimitReached } from "./limits.js";
import { policyIdsOf } from "./policies/policy-ids.js";
import { RedisPolicyDocs } from "./policies/redis-policy-docs.js";
import type { PolicyDoc, PolicyDocStore } from "./policies/types.js";
import {
  type AdmitReply,
  admitGroupArgs,
  assignArgs,
  defineCommands,
  fieldArgs,
  patchArgs,
  type SettleItem,
  settleGroupArgs,
} from "./redis-commands.js";
import { assignmentTag, RedisKeys } from "./redis-keys.js";
import { admission, counted, idempotencyClaimOf, patched } from "./redis-replies.js";
import { auditEventOf } from "./request-log/audit-log.js";
import type { SqlDatabase } from "./request-log/database.js";
import {
  admissionForRecovery,
  admissionFromRecovery,
  NOTHING_CHECKPOINTED,
  nothingServed,
  type OutboxRecord,
  type ReservationCheckpoint,
} from "./reservations.js";
import {
  type AssignmentKind,
  type AssignmentRecord,
  type Governance,
  type GuardrailPatch,
  type IdempotencyClaim,
  type IdempotentAnswer,
  type MemberRecord,
  type MembersAdded,
  ORG_SCOPE,
  type Page,
  type Store,
  type Versioned,
} from "./types.js";

type Client = Redis | Cluster;

function encode<D extends DescMessage>(schema: D, msg: MessageShape<D>): Buffer {
  // Only the fields the schema knows are stored: nothing unbounded rides along.
  const bytes = toBinary(schema, msg, { writeUnknownFields: false });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function decode<D extends DescMessage>(schema: D, data: Buffer | null | undefined) {
  return data && data.length > 0 ? fromBinary(schema, data) : undefined;
}

/** (field number, encoding) of the named fields of `g`; an unset field encodes as empty. */
function namedFields(g: Guardrail, names: string[]): [number, Uint8Array][] {
  return names.map((name) => {
    const n = guardrailFieldNumber(name);
    return [n, encodeField(g, n)];
  });
}

const FIELD_PREFIX = Buffer.from("f:");
const VERSION_KEY = Buffer.from("v");

/** A guardrail hash as read: its field encodings and its version. */
interface FieldHash {
  parts: Buffer[];
  version: number;
}

/**
 * A guardrail hash as stored: one entry per field ("f:<number>") and the version ("v"), as
 * HGETALL's flat [key, value, key, value...] reply. Read from the reply as it comes: ioredis'
 * own HGETALL reply (an object) turns every Buffer key into a string twice, which cost every
 * guardrail read more than decoding the guardrail itself. None when the hash has no field.
 */
function fieldHash(raw: Buffer[]): FieldHash | undefined {
  let version = 0;
  const parts: Buffer[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const key = raw[i] as Buffer;
    const value = raw[i + 1] as Buffer;
    if (key.equals(VERSION_KEY)) version = Number(value.toString());
    else if (key.length >= 2 && key[0] === FIELD_PREFIX[0] && key[1] === FIELD_PREFIX[1])
      parts.push(value);
  }
  return parts.length === 0 ? undefined : { parts, version };
}

function ms(ts: { seconds: bigint; nanos: number } | undefined): number {
  return ts ? Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6) : Date.now();
}

/** Pages through several sorted-set indexes as if they were one list. */
async function pageAcross(
  client: Client,
  indexes: string[],
  offset: number,
  limit: number,
): Promise<{ picks: { index: number; members: string[] }[]; total: number }> {
  const counts = await Promise.all(indexes.map((k) => client.zcard(k)));
  const total = counts.reduce((a, b) => a + b, 0);
  const picks: { index: number; members: string[] }[] = [];
  let skip = offset;
  let want = limit;
  for (let i = 0; i < indexes.length && want > 0; i++) {
    const n = counts[i] ?? 0;
    if (skip >= n) {
      skip -= n;
      continue;
    }
    const members = await client.zrange(indexes[i] as string, skip, skip + want - 1);
    picks.push({ index: i, members });
    want -= members.length;
    skip = 0;
  }
  return { picks, total };
}

/** Bounds the guardrail -> workspace memo (about 100 bytes an entry). */
const MAX_REMEMBERED_POINTERS = 100_000;

/**
 * How long a management write waits for its own outbox entry to reach the database before it
 * answers; past it the entry stays in Redis for any replica's drainer.
 */
const OWN_DRAIN_MS = 1_000;

/** Requests per admission or settlement script at most: one script keeps Redis busy ~1 ms. */
const GROUP_MAX_ITEMS = 64;

/** The window id of a key limit's counter (its suffix ends with it). */
function windowIdOf(c: UsageCounter): string {
  if (c.windowId === undefined) throw new Error(`usage counter ${c.suffix} has no window`);
  return c.windowId;
}

/** One request's settlement as SETTLE_GROUP takes it: the differences to its reservations. */
function settleItem(
  a: Admission,
  actual: Settlement,
  metered: boolean,
  record: Uint8Array | undefined,
): SettleItem {
  const real = new Map(actual.budgets.map((b) => [counterId(b), b.amountMicros]));
  const window = a.keyLimitWindow;
  return {
    id: a.id,
    keyHash: a.keyHash,
    metered,
    creditRefundMicros: a.creditMicros - actual.creditMicros,
    keyDeltaMicros: actual.keyMicros - a.keyMicros,
    creditMicros: actual.keyMicros,
    byokMicros: actual.byokMicros ?? 0,
    keyWindow: window?.creditWindow && {
      interval: window.creditWindow,
      id: windowIdOf(window),
      deltaMicros: actual.keyMicros - a.keyMicros,
    },
    // A counter the request cost exactly what it reserved has nothing to move.
    budgets: a.budgets.flatMap((b) => {
      const deltaMicros = (real.get(counterId(b)) ?? 0) - b.amountMicros;
      return deltaMicros === 0
        ? []
        : [{ guardrailId: b.guardrailId, entity: b.entity, day: b.day, deltaMicros }];
    }),
    tracked: a.recovery !== undefined && a.id !== undefined,
    record: record && Buffer.from(record.buffer, record.byteOffset, record.byteLength),
  };
}

/** The Redis (or Redis Cluster) store: the deployment's only shared state. */
export class RedisStore implements Store {
  readonly kind = "redis" as const;
  private readonly k: RedisKeys;
  private readonly pointers = new Map<string, string>();
  private readonly decoded = new DecodedGuardrails();

  constructor(
    private readonly client: Client,
    private readonly prefix: string,
    private readonly limits: CountLimits = COUNT_LIMITS,
    /** Settlement's usage windows: admission's clock (tests pin one). */
    private readonly clock: Clock = systemClock,
  ) {
    this.k = new RedisKeys(prefix);
    defineCommands(client);
  }

  openPolicyDocs(): PolicyDocStore {
    return new RedisPolicyDocs(
      this.client,
      this.prefix,
      (scope) => this.changed(scope),
      (scope, audit, run) => this.outboxed(scope, audit, [["p"]], {}, run),
    );
  }

  openAudioClips(): AudioClipStore {
    return new RedisAudioClips(this.client, this.prefix);
  }

  private drainer?: ConfigOutboxDrainer;

  get recordsAudit(): boolean {
    return this.drainer !== undefined;
  }

  /**
   * From now on every management write puts its audit event and the objects it changed in its
   * scope's outbox, in the same script as the change, and this process drains the outboxes
   * into `db` (its own entry before it answers, when the database answers quickly).
   */
  attachConfigLog(db: SqlDatabase): void {
    if (this.drainer) return;
    this.drainer = new ConfigOutboxDrainer(this.client, this.prefix, db);
    this.drainer.start();
    this.configDb = db;
  }

  private configDb?: SqlDatabase;
  private refiller?: RedisConfigRefiller;

  /**
   * Before serving: a Redis that lost its configuration (restarted empty, flushed) is refilled
   * from the attached database, then watched for the same every few seconds and on
   * reconnection. From now on the default workspace is only ever created after that check.
   */
  async restoreConfig(): Promise<void> {
    const db = this.configDb;
    if (!db || this.refiller) return;
    const refiller = new RedisConfigRefiller(this.client, this.prefix, db, async () => {
      this.pointers.clear();
      await this.changed("*");
    });
    this.refiller = refiller;
    refiller.watch();
    this.onInvalidate((scope) => {
      if (scope === "*") void refiller.ensure().catch(() => {});
    });
    await warnWithoutPersistence(this.client);
    await refiller.ensure();
  }

  /** Runs a management script in the outbox wrapper: its event, then what it changed. */
  private async outboxed<T>(
    scope: string,
    note: AuditNote | undefined,
    snapshots: SnapshotSpec[],
    extra: OutboxEvent,
    run: (outbox: string, event: string, snapshots: string) => Promise<T>,
  ): Promise<T> {
    const outbox = this.k.configOutbox(scope);
    const drainer = this.drainer;
    if (!drainer) return run(outbox, "", "[]");
    const event: OutboxEvent = { ...extra };
    if (note) {
      const audit = auditEventOf(note.origin, note.entry);
      event.audit = { ...audit, at: audit.at.toISOString() };
    }
    await drainer.announce(scope);
    const result = await run(outbox, JSON.stringify(event), JSON.stringify(snapshots));
    await drainer.drainSoon(scope, OWN_DRAIN_MS);
    return result;
  }

  async close(): Promise<void> {
    this.refiller?.close();
    await this.drainer?.close();
    // Admissions and settlements still grouped or on their way are answered first.
    await Promise.all([this.admissions.flush(), this.settlements.flush()]);
    this.subscriber?.disconnect();
    await this.client.quit();
  }

  async ping(): Promise<void> {
    await this.client.ping();
  }

  private subscriber?: Client;
  private readonly listeners = new Set<(scope: string) => void>();

  private emit(scope: string): void {
    for (const l of this.listeners) l(scope);
  }

  /**
   * Tells every replica that a scope changed. This process hears it at once,
   * not only when its own subscription echoes it: a change it acknowledges
   * must govern the very next request it serves.
   */
  private async changed(scope: string): Promise<void> {
    this.emit(scope);
    await this.client.publish(this.k.invalidations(), scope);
  }

  onInvalidate(listener: (scope: string) => void): () => void {
    if (!this.subscriber) {
      // Subscribing needs a connection of its own.
      const sub = this.client.duplicate();
      sub.on("error", () => {});
      sub.on("message", (_channel: string, scope: string) => this.emit(scope));
      // Messages published while the subscriber was disconnected are lost: forget everything.
      sub.on("ready", () => this.emit("*"));
      void sub.subscribe(this.k.invalidations());
      this.subscriber = sub;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async bootstrapDefaultWorkspace(candidate: Workspace): Promise<string | undefined> {
    // An emptied Redis gets its own default workspace back, never a new one.
    await this.refiller?.ensure();
    // HSETNX makes exactly one replica the creator, even when several start at once.
    const won = await this.client.hsetnx(this.k.org(), "default_ws", candidate.id);
    if (won === 1) {
      const result = await this.createWorkspaceWith(candidate, undefined, {
        defaultWorkspace: candidate.id,
      });
      if (result !== "ok") throw new Error(`default workspace slug "${candidate.slug}" is taken`);
      return candidate.id;
    }
    return this.defaultWorkspaceId();
  }

  async defaultWorkspaceId(): Promise<string | undefined> {
    // "" records that the default workspace was deleted: never recreate it.
    return (await this.client.hget(this.k.org(), "default_ws")) || undefined;
  }

  createWorkspace(ws: Workspace, audit?: AuditNote): Promise<"ok" | "slug-taken" | LimitReached> {
    return this.createWorkspaceWith(ws, audit, {});
  }

  private async createWorkspaceWith(
    ws: Workspace,
    audit: AuditNote | undefined,
    extra: OutboxEvent,
  ): Promise<"ok" | "slug-taken" | LimitReached> {
    // The place in the index is taken first: the index is what the limit counts, atomically.
    const claim = counted(
      await this.client.rgClaimWorkspace(
        this.k.workspaces(),
        ms(ws.createdAt),
        ws.id,
        this.limits.workspaces,
      ),
      this.limits.workspaces,
    );
    if (claim !== "ok") return claim;
    if ((await this.client.hsetnx(this.k.slugs(), ws.slug, ws.id)) === 0) {
      await this.client.zrem(this.k.workspaces(), ws.id);
      return "slug-taken";
    }
    await this.outboxed(ws.id, audit, [["ws", ws.id]], extra, (outbox, event, snaps) =>
      this.client.rgPutWorkspace(
        outbox,
        this.k.workspace(ws.id),
        encode(WorkspaceSchema, ws),
        "",
        event,
        snaps,
      ),
    );
    // The default guardrail's id resolves before it is materialized.
    await this.client.set(this.k.guardrailPointer(defaultGuardrailId(ws.id)), ws.id);
    await this.changed(ws.id);
    return "ok";
  }

  async getWorkspace(id: string): Promise<Workspace | undefined> {
    return decode(WorkspaceSchema, await this.client.getBuffer(this.k.workspace(id)));
  }

  async workspaceIdBySlug(slug: string): Promise<string | undefined> {
    return (await this.client.hget(this.k.slugs(), slug)) ?? undefined;
  }

  async listWorkspaces(offset: number, limit: number): Promise<Page<Workspace>> {
    const { picks, total } = await pageAcross(this.client, [this.k.workspaces()], offset, limit);
    const ids = picks.flatMap((p) => p.members);
    const items = await Promise.all(ids.map((id) => this.getWorkspace(id)));
    return { items: items.filter((w): w is Workspace => w !== undefined), total };
  }

  async updateWorkspace(
    ws: Workspace,
    previousSlug: string,
    audit?: AuditNote,
  ): Promise<"ok" | "slug-taken" | "missing"> {
    if (!(await this.client.exists(this.k.workspace(ws.id)))) return "missing";
    if (ws.slug !== previousSlug) {
      if ((await this.client.hsetnx(this.k.slugs(), ws.slug, ws.id)) === 0) return "slug-taken";
      await this.client.hdel(this.k.slugs(), previousSlug);
    }
    const written = await this.outboxed(ws.id, audit, [["ws", ws.id]], {}, (outbox, event, snaps) =>
      this.client.rgPutWorkspace(
        outbox,
        this.k.workspace(ws.id),
        encode(WorkspaceSchema, ws),
        "xx",
        event,
        snaps,
      ),
    );
    if (written === 0) return "missing";
    await this.changed(ws.id);
    return "ok";
  }

  async deleteWorkspace(
    id: string,
    audit?: AuditNote,
  ): Promise<"ok" | "missing" | { activeKeys: number }> {
    const ws = await this.getWorkspace(id);
    if (!ws) return "missing";
    // The script deletes the policy document; the ids it indexed (a global key) go after it.
    const policyDoc = await this.client.hget(this.k.policies(id), "doc");
    const reply = await this.outboxed(id, audit, [["ws", id]], {}, (outbox, event, snaps) =>
      this.client.rgDeleteWorkspace(
        outbox,
        this.k.workspace(id),
        this.k.guardrailIndex(id),
        this.k.keyIndex(id),
        this.k.assignments(id, "key"),
        this.k.assignments(id, "member"),
        this.k.enabledKeyIndex(id),
        this.k.assignmentIndex(id, "key"),
        this.k.assignmentIndex(id, "member"),
        this.k.members(id),
        this.k.policies(id),
        this.k.scopePrefix(id),
        event,
        snaps,
      ),
    );
    if (!reply) return "missing";
    if (reply[0] === "active-keys") return { activeKeys: reply[1] };
    const [, guardrails, keys] = reply;
    const pointers = [
      this.k.guardrailPointer(defaultGuardrailId(id)),
      ...guardrails.map((g) => this.k.guardrailPointer(g)),
      ...keys.map((h) => this.k.keyPointer(h)),
    ];
    // Pointers live on other slots: delete them one by one (cluster-safe).
    await Promise.all(pointers.map((p) => this.client.del(p)));
    const policyIds = policyDoc ? policyIdsOf(JSON.parse(policyDoc) as PolicyDoc) : [];
    if (policyIds.length > 0) await this.client.hdel(this.k.policyIndex(), ...policyIds);
    await this.client.zrem(this.k.workspaces(), id);
    await this.client.hdel(this.k.slugs(), ws.slug);
    if ((await this.defaultWorkspaceId()) === id)
      await this.client.hset(this.k.org(), "default_ws", "");
    await this.changed(id);
    return "ok";
  }

  /**
   * A guardrail's workspace never changes (ids are random UUIDs, and a
   * workspace default's id is derived from its workspace), so a pointer once
   * read is remembered: a read of a guardrail is then one round trip, not two.
   * A remembered pointer can only outlive its guardrail, and then the read that
   * follows finds nothing (404), as it would have without the memo.
   */
  async guardrailWorkspace(id: string): Promise<string | undefined> {
    const known = this.pointers.get(id);
    if (known !== undefined) return known;
    const ws = (await this.client.get(this.k.guardrailPointer(id))) ?? undefined;
    if (ws !== undefined) {
      if (this.pointers.size >= MAX_REMEMBERED_POINTERS) this.pointers.clear();
      this.pointers.set(id, ws);
    }
    return ws;
  }

  async getGuardrail(workspaceId: string, id: string): Promise<Versioned<Guardrail> | undefined> {
    const hash = await this.fieldHash(this.k.guardrail(workspaceId, id));
    return hash && { value: decodeFields(hash.parts, hash.version), version: hash.version };
  }

  async readGuardrail(
    workspaceId: string,
    id: string,
  ): Promise<Versioned<Readonly<Guardrail>> | undefined> {
    const key = this.k.guardrail(workspaceId, id);
    const hash = await this.fieldHash(key);
    return (
      hash && { value: this.decoded.decode(key, hash.parts, hash.version), version: hash.version }
    );
  }

  private async fieldHash(key: string): Promise<FieldHash | undefined> {
    // Spelled in capitals: ioredis applies its HGETALL reply transformer (to an object) by the
    // lower-case name only, so this returns Redis's own flat reply (see fieldHash).
    return fieldHash((await this.client.callBuffer("HGETALL", key)) as Buffer[]);
  }

  async createGuardrail(
    g: Guardrail,
    audit?: AuditNote,
    policyDocVersion?: number,
  ): Promise<"ok" | "exists" | "missing-workspace" | "conflict" | LimitReached> {
    const limit = this.limits.guardrailsPerWorkspace;
    const result = counted(
      await this.outboxed(g.workspaceId, audit, [["g", g.id]], {}, (outbox, event, snaps) =>
        this.client.rgCreateGuardrail(
          outbox,
          this.k.workspace(g.workspaceId),
          this.k.guardrail(g.workspaceId, g.id),
          this.k.guardrailIndex(g.workspaceId),
          ms(g.createdAt),
          g.id,
          defaultGuardrailId(g.workspaceId),
          limit,
          policyDocVersion ?? -1,
          ...fieldArgs(encodeFields(g)),
          event,
          snaps,
        ),
      ),
      limit,
    );
    if (result !== "ok") return result;
    await this.client.set(this.k.guardrailPointer(g.id), g.workspaceId);
    await this.changed(g.workspaceId);
    return "ok";
  }

  async patchGuardrail(
    p: GuardrailPatch,
    audit?: AuditNote,
  ): Promise<Versioned<Guardrail> | "conflict" | "missing"> {
    const result = patched(
      await this.outboxed(p.workspaceId, audit, [["g", p.id]], {}, (outbox, event, snaps) =>
        this.client.rgPatchGuardrailBuffer(
          outbox,
          ...patchArgs({
            keys: {
              workspace: this.k.workspace(p.workspaceId),
              guardrail: this.k.guardrail(p.workspaceId, p.id),
              index: this.k.guardrailIndex(p.workspaceId),
            },
            readVersion: p.readVersion,
            createdAtMs: ms(p.next.createdAt),
            id: p.id,
            written: namedFields(p.next, p.fields),
            guarded: namedFields(p.read, p.unchanged),
            materialize: p.materialize ? encodeFields(p.next) : undefined,
            policyDocVersion: p.policyDocVersion,
          }),
          event,
          snaps,
        ),
      ),
    );
    if (typeof result !== "string") await this.changed(p.workspaceId);
    return result;
  }

  async deleteGuardrail(workspaceId: string, id: string, audit?: AuditNote): Promise<boolean> {
    const n = await this.outboxed(workspaceId, audit, [["g", id]], {}, (outbox, event, snaps) =>
      this.client.rgDeleteGuardrail(
        outbox,
        this.k.guardrail(workspaceId, id),
        this.k.guardrailIndex(workspaceId),
        this.k.assignments(workspaceId, "key"),
        this.k.assignments(workspaceId, "member"),
        this.k.assignmentIndex(workspaceId, "key"),
        this.k.assignmentIndex(workspaceId, "member"),
        this.k.guardrailAssignments(workspaceId, "key", id),
        this.k.guardrailAssignments(workspaceId, "member", id),
        id,
        event,
        snaps,
      ),
    );
    // A workspace default reverts to unconfigured; its id stays resolvable.
    if (n === 1 && id !== defaultGuardrailId(workspaceId)) {
      await this.client.del(this.k.guardrailPointer(id));
    }
    if (n === 1) await this.changed(workspaceId);
    return n === 1;
  }

  async listGuardrails(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Guardrail>> {
    const scopes =
      workspaceId === undefined
        ? await this.client.zrange(this.k.workspaces(), 0, -1)
        : [workspaceId];
    const { picks, total } = await pageAcross(
      this.client,
      scopes.map((s) => this.k.guardrailIndex(s)),
      offset,
      limit,
    );
    const loaded = await Promise.all(
      picks.flatMap((p) => p.members.map((id) => this.getGuardrail(scopes[p.index] as string, id))),
    );
    return { items: loaded.flatMap((v) => (v ? [v.value] : [])), total };
  }

  async createKey(
    scope: string,
    key: ApiKey,
    audit?: AuditNote,
  ): Promise<"ok" | "missing-workspace" | "exists" | LimitReached> {
    // The pointer doubles as the uniqueness check across all workspaces.
    if ((await this.client.set(this.k.keyPointer(key.hash), scope, "NX")) !== "OK") return "exists";
    const limit = scope === ORG_SCOPE ? this.limits.managementKeys : this.limits.keysPerWorkspace;
    const result = counted(
      await this.outboxed(scope, audit, [["k", key.hash]], {}, (outbox, event, snaps) =>
        this.client.rgCreateKey(
          outbox,
          this.k.workspace(scope),
          this.k.key(scope, key.hash),
          this.k.keyIndex(scope),
          this.k.enabledKeyIndex(scope),
          encode(ApiKeySchema, { ...key, guardrailId: "" }),
          ms(key.createdAt),
          key.hash,
          scope === ORG_SCOPE ? "0" : "1",
          key.disabled ? "0" : "1",
          limit,
          event,
          snaps,
        ),
      ),
      limit,
    );
    if (result !== "ok") await this.client.del(this.k.keyPointer(key.hash));
    else await this.changed(scope);
    return result;
  }

  async keyScope(hash: string): Promise<string | undefined> {
    return (await this.client.get(this.k.keyPointer(hash))) ?? undefined;
  }

  async getKey(scope: string, hash: string): Promise<ApiKey | undefined> {
    const [data, assignment] = await Promise.all([
      this.client.getBuffer(this.k.key(scope, hash)),
      this.client.hget(this.k.assignments(scope, "key"), hash),
    ]);
    const key = decode(ApiKeySchema, data);
    if (key && assignment)
      key.guardrailId = (JSON.parse(assignment) as AssignmentRecord).guardrailId;
    return key;
  }

  async putKey(scope: string, key: ApiKey, audit?: AuditNote): Promise<boolean> {
    const ok =
      (await this.outboxed(scope, audit, [["k", key.hash]], {}, (outbox, event, snaps) =>
        this.client.rgPutKey(
          outbox,
          this.k.key(scope, key.hash),
          this.k.keyIndex(scope),
          this.k.enabledKeyIndex(scope),
          encode(ApiKeySchema, { ...key, guardrailId: "" }),
          key.hash,
          key.disabled ? "0" : "1",
          event,
          snaps,
        ),
      )) === 1;
    if (ok) await this.changed(scope);
    return ok;
  }

  async deleteKey(scope: string, hash: string, audit?: AuditNote): Promise<boolean> {
    const n = await this.outboxed(scope, audit, [["k", hash]], {}, (outbox, event, snaps) =>
      this.client.rgDeleteKey(
        outbox,
        this.k.key(scope, hash),
        this.k.keyIndex(scope),
        this.k.enabledKeyIndex(scope),
        this.k.assignments(scope, "key"),
        this.k.assignmentIndex(scope, "key"),
        hash,
        this.k.scopePrefix(scope),
        event,
        snaps,
      ),
    );
    if (n === 1) {
      await this.client.del(this.k.keyPointer(hash));
      await this.changed(scope);
    }
    return n === 1;
  }

  async listKeys(
    scope: string | undefined,
    offset: number,
    limit: number,
    enabledOnly = false,
  ): Promise<Page<ApiKey>> {
    const scopes =
      scope === undefined
        ? [ORG_SCOPE, ...(await this.client.zrange(this.k.workspaces(), 0, -1))]
        : [scope];
    const { picks, total } = await pageAcross(
      this.client,
      scopes.map((s) => (enabledOnly ? this.k.enabledKeyIndex(s) : this.k.keyIndex(s))),
      offset,
      limit,
    );
    const loaded = await Promise.all(
      picks.flatMap((p) => p.members.map((h) => this.getKey(scopes[p.index] as string, h))),
    );
    return { items: loaded.filter((k): k is ApiKey => k !== undefined), total };
  }

  async assign(
    kind: AssignmentKind,
    records: AssignmentRecord[],
    audit?: AuditNote,
  ): Promise<{ assigned: number } | "missing" | LimitReached> {
    const first = records[0];
    if (!first) return { assigned: 0 };
    const ws = first.workspaceId;
    // One record per subject: the script counts each new subject once.
    const unique = [...new Map(records.map((r) => [r.subject, r])).values()];
    const guardrailKey = this.k.guardrail(ws, first.guardrailId);
    const checks = unique.map((r) => (kind === "key" ? this.k.key(ws, r.subject) : guardrailKey));
    const limit =
      kind === "key"
        ? this.limits.keyAssignmentsPerWorkspace
        : this.limits.memberAssignmentsPerWorkspace;
    const tag = assignmentTag(kind);
    const snapshots = unique.map((r): SnapshotSpec => ["a", tag, r.subject]);
    const reply = await this.outboxed(ws, audit, snapshots, {}, (outbox, event, snaps) =>
      this.client.rgAssign(
        ...assignArgs({
          keys: {
            outbox,
            guardrail: guardrailKey,
            assignments: this.k.assignments(ws, kind),
            index: this.k.assignmentIndex(ws, kind),
          },
          checks,
          guardrailId: first.guardrailId,
          guardrailIndexStem: this.k.scopePrefix(ws) + assignmentTag(kind),
          limit,
          records: unique.map((r) => JSON.stringify(r)),
          event,
          snapshots: snaps,
        }),
      ),
    );
    if (Array.isArray(reply)) return { limit, count: reply[1], adding: reply[2] };
    if (reply > 0) await this.changed(ws);
    return reply < 0 ? "missing" : { assigned: reply };
  }

  async unassign(
    kind: AssignmentKind,
    workspaceId: string,
    guardrailId: string,
    subjects: string[],
    audit?: AuditNote,
  ): Promise<number> {
    if (subjects.length === 0) return 0;
    const unique = [...new Set(subjects)];
    const tag = assignmentTag(kind);
    const snapshots = unique.map((s): SnapshotSpec => ["a", tag, s]);
    const n = await this.outboxed(workspaceId, audit, snapshots, {}, (outbox, event, snaps) =>
      this.client.rgUnassign(
        outbox,
        this.k.assignments(workspaceId, kind),
        this.k.assignmentIndex(workspaceId, kind),
        this.k.guardrailAssignments(workspaceId, kind, guardrailId),
        guardrailId,
        ...unique,
        event,
        snaps,
      ),
    );
    if (n > 0) await this.changed(workspaceId);
    return n;
  }

  async addMembers(
    workspaceId: string,
    records: MemberRecord[],
    audit?: AuditNote,
  ): Promise<MembersAdded | "missing" | LimitReached> {
    const unique = [...new Map(records.map((r) => [r.userId, r])).values()];
    if (unique.length === 0) return { added: 0, members: [] };
    const limit = membersPerWorkspace(this.limits);
    const snapshots = unique.map((r): SnapshotSpec => ["m", r.userId]);
    const reply = await this.outboxed(workspaceId, audit, snapshots, {}, (outbox, event, snaps) =>
      this.client.rgAddMembers(
        outbox,
        this.k.workspace(workspaceId),
        this.k.members(workspaceId),
        limit,
        ...unique.map((r) => JSON.stringify(r)),
        event,
        snaps,
      ),
    );
    if (Array.isArray(reply)) return { limit, count: reply[1], adding: reply[2] };
    if (reply < 0) return "missing";
    const stored = await this.client.hmget(
      this.k.members(workspaceId),
      ...unique.map((r) => r.userId),
    );
    // A member removed between the two steps is left out of the answer.
    const members = stored.flatMap((raw) => (raw ? [JSON.parse(raw) as MemberRecord] : []));
    return { added: reply, members };
  }

  async removeMembers(workspaceId: string, userIds: string[], audit?: AuditNote): Promise<number> {
    const unique = [...new Set(userIds)];
    if (unique.length === 0) return 0;
    const snapshots = unique.map((u): SnapshotSpec => ["m", u]);
    return this.outboxed(workspaceId, audit, snapshots, {}, (outbox, event, snaps) =>
      this.client.rgRemoveMembers(outbox, this.k.members(workspaceId), ...unique, event, snaps),
    );
  }

  async listMembers(workspaceId: string): Promise<MemberRecord[]> {
    const all = await this.client.hvals(this.k.members(workspaceId));
    return all
      .map((raw) => JSON.parse(raw) as MemberRecord)
      .sort((a, b) => a.createdAtMs - b.createdAtMs || (a.userId < b.userId ? -1 : 1));
  }

  async getAssignment(
    kind: AssignmentKind,
    workspaceId: string,
    subject: string,
  ): Promise<AssignmentRecord | undefined> {
    const raw = await this.client.hget(this.k.assignments(workspaceId, kind), subject);
    return raw ? (JSON.parse(raw) as AssignmentRecord) : undefined;
  }

  async listAssignments(
    kind: AssignmentKind,
    workspaceId: string | undefined,
    guardrailId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<AssignmentRecord>> {
    const scopes =
      workspaceId === undefined
        ? await this.client.zrange(this.k.workspaces(), 0, -1)
        : [workspaceId];
    const { picks, total } = await pageAcross(
      this.client,
      scopes.map((s) =>
        guardrailId === undefined
          ? this.k.assignmentIndex(s, kind)
          : this.k.guardrailAssignments(s, kind, guardrailId),
      ),
      offset,
      limit,
    );
    const pages = await Promise.all(
      picks.map((p) =>
        p.members.length === 0
          ? []
          : this.client.hmget(this.k.assignments(scopes[p.index] as string, kind), ...p.members),
      ),
    );
    // An assignment removed or moved between the two reads is left out of this page.
    const items = pages
      .flat()
      .flatMap((raw) => (raw ? [JSON.parse(raw) as AssignmentRecord] : []))
      .filter((a) => guardrailId === undefined || a.guardrailId === guardrailId);
    return { items, total };
  }

  async loadGovernance(hash: string): Promise<Governance | undefined> {
    const scope = await this.keyScope(hash);
    if (scope === undefined) return undefined;
    // The member id is inside the key record; read the key first, then the rest at once.
    const keyData = await this.client.getBuffer(this.k.key(scope, hash));
    const key = decode(ApiKeySchema, keyData);
    if (!key) return undefined;
    const parts = await this.client.rgLoadGovernanceBuffer(
      this.k.key(scope, hash),
      this.k.assignments(scope, "key"),
      this.k.assignments(scope, "member"),
      hash,
      key.memberUserId,
      this.k.scopePrefix(scope),
      scope === ORG_SCOPE ? "" : defaultGuardrailId(scope),
    );
    if (parts.length === 0) return undefined;
    const [keyBuf, keyG, memberG, defaultG] = parts;
    const current = decode(ApiKeySchema, keyBuf) ?? key;
    const keyGuardrail = decode(GuardrailSchema, keyG);
    current.guardrailId = keyGuardrail?.id ?? "";
    return {
      key: current,
      keyGuardrail,
      memberGuardrail: decode(GuardrailSchema, memberG),
      defaultGuardrail: decode(GuardrailSchema, defaultG),
    };
  }

  /**
   * Admissions and settlements of one scope that arrive together go to Redis as one script
   * (store/group-commit.ts): under load, one round trip serves many requests, each admitted
   * exactly as alone, in order, so no limit is ever passed.
   */
  private readonly admissions = new GroupCommit<Admission, AdmissionResult>(
    (scope, items) => this.admitGroup(scope, items),
    GROUP_MAX_ITEMS,
  );
  private readonly settlements = new GroupCommit<SettleItem, number>(
    (scope, items) => this.settleGroup(scope, items),
    GROUP_MAX_ITEMS,
  );

  /** Scopes this process has registered in the recovery index (once each, before admitting). */
  private readonly recoveryScopes = new Set<string>();

  admit(a: Admission): Promise<AdmissionResult> {
    if (a.recovery && !this.recoveryScopes.has(a.scope)) return this.admitFirstTracked(a);
    return this.admissions.submit(a.scope, a);
  }

  /** A recovering process finds reservations by scope: the scope is indexed before any is made. */
  private async admitFirstTracked(a: Admission): Promise<AdmissionResult> {
    await this.client.sadd(this.k.recoveryScopes(), a.scope);
    this.recoveryScopes.add(a.scope);
    return this.admissions.submit(a.scope, a);
  }

  private async admitGroup(
    scope: string,
    items: Admission[],
  ): Promise<(AdmissionResult | Error)[]> {
    const replies = await this.client.rgAdmitGroup(
      ...admitGroupArgs({
        credits: this.k.credits(scope),
        scopePrefix: this.k.scopePrefix(scope),
        counterTtlSeconds: SPEND_TTL_SECONDS,
        daysKept: SPEND_DAYS_KEPT,
        items: items.map((a) => ({
          keyHash: a.keyHash,
          rate: a.rate && {
            limit: a.rate.limit,
            windowIndex: rateWindowIndex(a.rate),
            windowRemainingMs: rateWindowRemainingMs(a.rate),
          },
          creditMicros: a.creditMicros,
          keyLimitMicros: a.keyLimitMicros,
          keyMicros: a.keyMicros,
          keyWindow: a.keyLimitWindow && {
            id: windowIdOf(a.keyLimitWindow),
            ttlSeconds: a.keyLimitWindow.ttlSeconds,
          },
          keyLimitIncludesByok: a.keyLimitIncludesByok === true,
          budgets: a.budgets,
          tracked:
            a.recovery && a.id !== undefined
              ? {
                  id: a.id,
                  leaseUntilMs: a.recovery.leaseUntilMs,
                  admission: admissionForRecovery(a),
                  record: Buffer.from(a.recovery.record),
                }
              : undefined,
        })),
      }),
    );
    return items.map((a, i) => {
      const reply = replies[i] as AdmitReply;
      return reply[0] === "error" ? new Error(`ADMIT_GROUP: ${reply[1]}`) : admission(reply, a);
    });
  }

  /**
   * Grouped with the settlements of the scope that end together (one script); the promise
   * settles with the group, so a caller that keeps failed writes for retry (the speech
   * service) still keeps this one. Idempotent by the admission's id.
   */
  async settle(
    a: Admission,
    actual: Settlement,
    metered: boolean,
    record?: Uint8Array,
  ): Promise<boolean> {
    return (await this.settlements.submit(a.scope, settleItem(a, actual, metered, record))) === 1;
  }

  private async settleGroup(scope: string, items: SettleItem[]): Promise<(number | Error)[]> {
    const now = this.clock.now();
    const replies = await this.client.rgSettleGroup(
      ...settleGroupArgs({
        credits: this.k.credits(scope),
        scopePrefix: this.k.scopePrefix(scope),
        markerTtlSeconds: SETTLED_MARKER_TTL_SECONDS,
        windows: usageWindows(new Date(now)),
        nowMs: now,
        items,
      }),
    );
    return items.map((_, i) => {
      const reply = replies[i];
      return typeof reply === "string" ? new Error(`SETTLE_GROUP: ${reply}`) : Number(reply);
    });
  }

  async keepReservations(scope: string, checkpoints: ReservationCheckpoint[]): Promise<number> {
    if (checkpoints.length === 0) return 0;
    const args: (string | number | Buffer)[] = [];
    for (const c of checkpoints) {
      args.push(
        c.admissionId,
        c.leaseUntilMs,
        c.progress ? JSON.stringify(c.progress.actual) : "",
        c.progress ? Buffer.from(c.progress.record) : "",
      );
    }
    return Number(
      await this.client.rgKeepReservations(
        this.k.reservationLeases(scope),
        this.k.scopePrefix(scope),
        ...args,
      ),
    );
  }

  async recoverReservations(nowMs: number, max: number): Promise<number> {
    let settled = 0;
    for (const scope of await this.client.smembers(this.k.recoveryScopes())) {
      const reply = await this.client.rgExpiredReservationsBuffer(
        this.k.reservationLeases(scope),
        this.k.scopePrefix(scope),
        nowMs,
        max,
      );
      const items: SettleItem[] = [];
      for (let i = 0; i + 3 < reply.length; i += 4) {
        const held = String(reply[i + 1] ?? "");
        // Settled between the read and now by its owner: nothing left to do.
        if (held === "") continue;
        const admission = admissionFromRecovery(held.slice(1));
        const progress = String(reply[i + 2] ?? "");
        const actual =
          progress === "" ? nothingServed(admission) : (JSON.parse(progress) as Settlement);
        const ending = reply[i + 3];
        const record = ending && ending.byteLength > 0 ? ending : NOTHING_CHECKPOINTED;
        items.push({ ...settleItem(admission, actual, held[0] === "1", record), tracked: true });
      }
      if (items.length === 0) continue;
      // Through the scope's group, as the owners' settlements go: each applies once either way.
      const applied = await Promise.all(items.map((item) => this.settlements.submit(scope, item)));
      settled += applied.filter((n) => n === 1).length;
    }
    return settled;
  }

  async reservationLeases(scope: string): Promise<{ id: string; leaseUntilMs: number }[]> {
    const flat = await this.client.zrange(this.k.reservationLeases(scope), 0, -1, "WITHSCORES");
    const out: { id: string; leaseUntilMs: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2)
      out.push({ id: flat[i] as string, leaseUntilMs: Number(flat[i + 1]) });
    return out;
  }

  async outboxRecords(beforeMs: number, max: number): Promise<OutboxRecord[]> {
    const out: OutboxRecord[] = [];
    for (const scope of await this.client.smembers(this.k.recoveryScopes())) {
      const reply = await this.client.rgOutboxRecordsBuffer(
        this.k.outboxIndex(scope),
        this.k.scopePrefix(scope),
        beforeMs,
        max - out.length,
      );
      for (let i = 0; i + 1 < reply.length; i += 2)
        out.push({ scope, id: String(reply[i]), record: reply[i + 1] as Buffer });
      if (out.length >= max) break;
    }
    return out;
  }

  async outboxDone(scope: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.client.rgOutboxDone(this.k.outboxIndex(scope), this.k.scopePrefix(scope), ...ids);
  }

  async getCredits(scope: string): Promise<number | undefined> {
    const v = await this.client.get(this.k.credits(scope));
    return v === null ? undefined : Number(v);
  }

  async addCredits(scope: string, micros: number, audit?: AuditNote): Promise<number> {
    // One script: the added total and the balance never disagree, and the ledger row rides along.
    const at = new Date().toISOString();
    const credits = { id: newOrderedId(), workspaceId: scope, amountMicros: micros, at };
    const reply = await this.outboxed(scope, audit, [["c"]], { credits }, (outbox, event, snaps) =>
      this.client.rgAddCredits(
        outbox,
        this.k.credits(scope),
        this.k.creditsAdded(scope),
        micros,
        event,
        snaps,
      ),
    );
    return Number(reply[1]);
  }

  async addCreditsOnce(
    scope: string,
    micros: number,
    onceId: string,
    ttlSeconds: number,
    audit?: AuditNote,
  ): Promise<{ balanceMicros: number; applied: boolean }> {
    const at = new Date().toISOString();
    const credits = { id: newOrderedId(), workspaceId: scope, amountMicros: micros, at };
    const reply = await this.outboxed(scope, audit, [["c"]], { credits }, (outbox, event, snaps) =>
      this.client.rgAddCreditsOnce(
        outbox,
        this.k.credits(scope),
        this.k.creditsAdded(scope),
        this.k.creditsOnce(scope, onceId),
        micros,
        ttlSeconds,
        event,
        snaps,
      ),
    );
    return { balanceMicros: Number(reply[1]), applied: reply[0] === "ok" };
  }

  async claimIdempotency(
    id: string,
    fingerprint: string,
    claimSeconds: number,
  ): Promise<IdempotencyClaim> {
    const token = randomUUID();
    const reply = await this.client.rgClaimIdempotency(
      this.k.idempotency(id),
      fingerprint,
      token,
      claimSeconds * 1000,
    );
    return idempotencyClaimOf(reply, token);
  }

  async completeIdempotency(
    id: string,
    token: string,
    answer: IdempotentAnswer,
    ttlSeconds: number,
  ): Promise<boolean> {
    const done = await this.client.rgCompleteIdempotency(
      this.k.idempotency(id),
      token,
      answer.status,
      answer.body,
      ttlSeconds * 1000,
    );
    return done === 1;
  }

  async releaseIdempotency(id: string, token: string): Promise<void> {
    await this.client.rgReleaseIdempotency(this.k.idempotency(id), token);
  }

  async getCreditsAdded(scope: string): Promise<number> {
    return Number((await this.client.get(this.k.creditsAdded(scope))) ?? 0);
  }

  async getKeyUsage(scope: string, keyHash: string, now: Date): Promise<KeyUsage> {
    const counters = keyUsageCounters(keyHash, now);
    const values = await this.client.mget(
      this.k.keySpend(scope, keyHash),
      ...counters.map((c) => this.k.keyUsage(scope, c.suffix)),
    );
    const [total, ...rest] = values.map((v) => Number(v ?? 0));
    return keyUsageFrom(total ?? 0, rest);
  }

  async getSpend(scope: string, windows: SpendWindow[]): Promise<number[]> {
    return Promise.all(
      windows.map(async (w) => {
        const days = Array.from({ length: Math.max(0, w.lastDay - w.firstDay + 1) }, (_, i) =>
          String(w.firstDay + i),
        );
        if (days.length === 0) return 0;
        const values = await this.client.hmget(
          this.k.budgetSpend(scope, w.guardrailId, w.entity),
          ...days,
        );
        return values.reduce((sum, v) => sum + Number(v ?? 0), 0);
      }),
    );
  }

  async getGuardrailSpend(
    scope: string,
    queries: GuardrailSpendQuery[],
  ): Promise<GuardrailSpend[]> {
    if (queries.length === 0) return [];
    const flat = await this.client.rgGuardrailSpend(
      this.k.spendIndex(scope),
      this.k.scopePrefix(scope),
      ...queries.flatMap((q) => [q.guardrailId, q.firstDay, q.lastDay]),
    );
    return queries.map((_, i) => ({
      keyMicros: Number(flat[4 * i] ?? 0),
      memberMicros: Number(flat[4 * i + 1] ?? 0),
      maxEntityMicros: Number(flat[4 * i + 2] ?? 0),
      entities: Number(flat[4 * i + 3] ?? 0),
    }));
  }
}
