import type { AuditActor, AuditOrigin, AuditResourceType } from "../../domain/audit.js";
import { newOrderedId } from "../../domain/ids.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { BatchWriter } from "./batch-writer.js";
import type { SqlDatabase } from "./database.js";
import { GuardrailVersions } from "./guardrail-versions.js";
import { containing, countMatches, type MatchCount } from "./match-count.js";
import { DayPartitions, dropDayPartitionsBefore } from "./partitions.js";
import { PolicyVersions } from "./policy-versions.js";

export type { AuditActor, AuditOrigin, AuditResourceType };

const log = componentLogger("audit-log");
const TABLE = "audit_events";
const DAY_MS = 86_400_000;
/** Partitions are made a day ahead and old ones dropped on this beat (and at start). */
const MAINTENANCE_EVERY_MS = 3_600_000;

/** Only the fields that changed, each with its value before and after (null = absent). */
export type AuditChanges = Record<string, { before: unknown; after: unknown }>;

/** What a service records about one management write. */
export interface AuditEntry {
  /** `<resource>.<verb>`: "key.create", "guardrail.update", "credits.add", "webhook.delete"... */
  action: string;
  resource: { type: AuditResourceType; id: string; label?: string | null };
  workspaceId?: string | null;
  changes: AuditChanges;
}

/** One stored event. */
export interface AuditEvent {
  id: string;
  at: Date;
  actor: AuditActor;
  action: string;
  resource: { type: string; id: string; label: string | null };
  workspaceId: string | null;
  changes: AuditChanges;
  requestId: string | null;
}

/** Filters of a list; every one optional. `from` is inclusive, `to` exclusive. */
export interface AuditQuery {
  action?: string;
  resourceType?: string;
  resourceId?: string;
  /** The actor's key hash. */
  actor?: string;
  workspaceId?: string;
  from?: Date;
  to?: Date;
  /** Continue after this event (the previous page's last): newest first. */
  after?: { at: Date; id: string };
  limit: number;
  /** Part of the action, the resource's id or name, or the actor's name (case-insensitive). */
  search?: string;
}

/** The WHERE clause of a list's filters (its cursor aside), with its parameters. */
function filters(q: AuditQuery): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: (n: string) => string, value: unknown) => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (q.action !== undefined) add((p) => `action = ${p}`, q.action);
  if (q.resourceType !== undefined) add((p) => `resource_type = ${p}`, q.resourceType);
  if (q.resourceId !== undefined) add((p) => `resource_id = ${p}`, q.resourceId);
  if (q.actor !== undefined) add((p) => `actor_key_hash = ${p}`, q.actor);
  if (q.workspaceId !== undefined) add((p) => `workspace_id = ${p}`, q.workspaceId);
  if (q.from !== undefined) add((p) => `at >= ${p}`, q.from);
  if (q.to !== undefined) add((p) => `at < ${p}`, q.to);
  if (q.search !== undefined) {
    const pattern = containing(q.search);
    add(
      (p) =>
        `(action ILIKE ${p} OR resource_id ILIKE ${p} OR resource_label ILIKE ${p} OR actor_name ILIKE ${p})`,
      pattern,
    );
  }
  return { where, params };
}

/**
 * A field that names a secret (a webhook's signing secret, a token) never reaches the log with
 * its value, whoever records it: the event says that it changed, not what to. Hashes are not
 * secrets (a key's hash is its public id).
 */
const SECRET_FIELD = /(^|_)(secret|password|token|api_key|key_secret)($|_)/i;
const REDACTED = "[redacted]";

function canonical(v: unknown): string {
  return JSON.stringify(v ?? null, (_k, value) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => a.localeCompare(b)))
      : value,
  );
}

/**
 * The fields whose values differ between two renderings of a resource (null for one that did
 * not exist: a create has no before, a delete no after). Values compare as JSON, so key order
 * and undefined-vs-null make no difference.
 */
export function changesBetween(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
): AuditChanges {
  const out: AuditChanges = {};
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const name of names) {
    const b = before?.[name] ?? null;
    const a = after?.[name] ?? null;
    if (canonical(b) !== canonical(a)) out[name] = { before: b, after: a };
  }
  return out;
}

function withoutSecrets(changes: AuditChanges): AuditChanges {
  const out: AuditChanges = {};
  for (const [name, c] of Object.entries(changes)) {
    out[name] = SECRET_FIELD.test(name)
      ? {
          before: c.before === null || c.before === undefined ? null : REDACTED,
          after: c.after === null || c.after === undefined ? null : REDACTED,
        }
      : { before: c.before ?? null, after: c.after ?? null };
  }
  return out;
}

interface Row {
  id: string;
  at: Date;
  actor_key_hash: string;
  actor_label: string;
  actor_name: string;
  action: string;
  resource_type: string;
  resource_id: string;
  resource_label: string | null;
  workspace_id: string | null;
  changes: AuditChanges;
  request_id: string | null;
}

function fromRow(r: Row): AuditEvent {
  return {
    id: r.id,
    at: r.at,
    actor: { keyHash: r.actor_key_hash, label: r.actor_label, name: r.actor_name },
    action: r.action,
    resource: { type: r.resource_type, id: r.resource_id, label: r.resource_label },
    workspaceId: r.workspace_id,
    changes: r.changes,
    requestId: r.request_id,
  };
}

const COLUMNS = [
  "id",
  "at",
  "actor_key_hash",
  "actor_label",
  "actor_name",
  "action",
  "resource_type",
  "resource_id",
  "resource_label",
  "workspace_id",
  "changes",
  "request_id",
] as const;

function rowValues(e: AuditEvent): unknown[] {
  return [
    e.id,
    e.at,
    e.actor.keyHash,
    e.actor.label,
    e.actor.name,
    e.action,
    e.resource.type,
    e.resource.id,
    e.resource.label,
    e.workspaceId,
    JSON.stringify(e.changes),
    e.requestId,
  ];
}

/** The stored event of one management write: made before the write when it rides an outbox. */
export function auditEventOf(origin: AuditOrigin, entry: AuditEntry, at = new Date()): AuditEvent {
  return {
    // Time-ordered: two writes in the same millisecond still list in the order they were made.
    id: newOrderedId(),
    at,
    actor: origin.actor,
    action: entry.action,
    resource: {
      type: entry.resource.type,
      id: entry.resource.id,
      label: entry.resource.label ?? null,
    },
    workspaceId: entry.workspaceId ?? null,
    changes: withoutSecrets(entry.changes),
    requestId: origin.requestId || null,
  };
}

/** The day partitions audit events go to (they must exist before an insert). */
export function auditPartitions(db: SqlDatabase): DayPartitions {
  return new DayPartitions(db, TABLE);
}

/**
 * Inserts events whose day partitions exist, idempotently by id: an event written twice (an
 * outbox drained by two replicas at once) is stored once. Runs inside the caller's transaction.
 */
export async function insertAuditEvents(db: SqlDatabase, batch: AuditEvent[]): Promise<void> {
  if (batch.length === 0) return;
  const params: unknown[] = [];
  const rows = batch.map((e) => {
    const values = rowValues(e);
    const first = params.length;
    params.push(...values);
    return `(${values.map((_, i) => `$${first + i + 1}${COLUMNS[i] === "changes" ? "::jsonb" : ""}`).join(", ")})`;
  });
  await db.query(
    `INSERT INTO ${TABLE} (${COLUMNS.join(", ")}) VALUES ${rows.join(", ")}
     ON CONFLICT (id, at) DO NOTHING`,
    params,
  );
}

/**
 * What must be stored exactly when an event is (a policy's version): written by the event's
 * own transaction, after the event, and as idempotent as the event's insert.
 */
export type WrittenWith = (tx: SqlDatabase, event: AuditEvent) => Promise<void>;

interface Pending {
  event: AuditEvent;
  with?: WrittenWith;
}

export interface AuditLogOptions {
  /** Events waiting for the database at most (RAILGATE_REQUEST_LOG_QUEUE_MAX); more are dropped, counted. */
  queueLimit: number;
  /** Days kept (RAILGATE_AUDIT_LOG_RETENTION_DAYS); older days' partitions are dropped. */
  retentionDays: number;
  /** Batch delay of the writer (default 50 ms). */
  maxDelayMs?: number;
}

/**
 * The audit log of management writes, in the request-log database. record() never waits and
 * never throws: the event goes to a bounded BatchWriter and is written off the request's path,
 * in batches, idempotently by id. list() first writes what this process still holds, so an
 * operator reads their own change at once (read-your-writes on this replica; others see it
 * within a batch delay).
 */
export class AuditLog {
  private readonly writer: BatchWriter<Pending>;
  private readonly partitions: DayPartitions;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: SqlDatabase,
    private readonly options: AuditLogOptions,
  ) {
    this.partitions = new DayPartitions(db, TABLE);
    this.writer = new BatchWriter<Pending>({
      name: "audit-log",
      queueLimit: options.queueLimit,
      maxDelayMs: options.maxDelayMs,
      write: (batch) => this.insert(batch),
    });
  }

  /** Records one management write. The one call every service (and the webhook routes) uses. */
  record(origin: AuditOrigin, entry: AuditEntry, at = new Date()): AuditEvent {
    const event = auditEventOf(origin, entry, at);
    this.writer.add({ event });
    return event;
  }

  private async insert(batch: Pending[]): Promise<void> {
    const events = batch.map((p) => p.event);
    await this.partitions.ensure(events.map((e) => e.at));
    if (!batch.some((p) => p.with)) return insertAuditEvents(this.db, events);
    await this.db.transaction(async (tx) => {
      await insertAuditEvents(tx, events);
      for (const p of batch) await p.with?.(tx, p.event);
    });
  }

  /**
   * Writes one event now and resolves once it is stored: for a write whose store keeps no
   * outbox (the embedded store, webhooks), so the change is acknowledged only after its event
   * is durable. When the database does not take it, the event is queued as record() would.
   */
  async recordDurably(
    origin: AuditOrigin,
    entry: AuditEntry,
    at = new Date(),
    writtenWith?: WrittenWith,
  ): Promise<AuditEvent> {
    const pending: Pending = { event: auditEventOf(origin, entry, at), with: writtenWith };
    try {
      await this.insert([pending]);
    } catch (err) {
      log.warn({ err: String(err) }, "audit event not written at once; queued");
      this.writer.add(pending);
    }
    return pending.event;
  }

  /** Resolves once what this process queued so far is written (or given up on). */
  async written(): Promise<void> {
    await this.writer.written().catch((err: unknown) => {
      log.warn({ err: String(err) }, "audit events not yet written");
    });
  }

  /** Newest first; `limit + 1` rows are read so the caller knows whether another page exists. */
  async list(q: AuditQuery): Promise<{ events: AuditEvent[]; more: boolean }> {
    // What this process held at the call goes first: the reader sees its own writes.
    await this.writer.written().catch((err: unknown) => {
      log.warn({ err: String(err) }, "audit events not yet written; listing what is stored");
    });
    const { where, params } = filters(q);
    if (q.after !== undefined) {
      params.push(q.after.at, q.after.id);
      where.push(`(at, id) < ($${params.length - 1}, $${params.length})`);
    }
    params.push(q.limit + 1);
    const rows = await this.db.query<Row>(
      `SELECT ${COLUMNS.join(", ")} FROM ${TABLE}
       ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}
       ORDER BY at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return { events: rows.slice(0, q.limit).map(fromRow), more: rows.length > q.limit };
  }

  /**
   * How many events a list's filters match (its cursor aside), read after list() (whose own
   * writes it sees): counted up to AUDIT_COUNT_EXACT_MAX, past it the planner's estimate.
   */
  async count(q: AuditQuery): Promise<MatchCount> {
    const { where, params } = filters(q);
    const from = `FROM ${TABLE} ${where.length > 0 ? `WHERE ${where.join(" AND ")}` : ""}`;
    return countMatches(this.db, from, params);
  }

  /**
   * Today's and tomorrow's partitions exist (a write never waits for DDL at midnight), and
   * days older than the retention are dropped whole: the only way events leave the table.
   */
  async maintain(now = new Date()): Promise<number[]> {
    await this.partitions.ensure([now, new Date(now.getTime() + DAY_MS)]);
    const cutoff = new Date(now.getTime() - this.options.retentionDays * DAY_MS);
    const dropped = await dropDayPartitionsBefore(this.db, TABLE, cutoff);
    this.partitions.forget(dropped);
    if (dropped.length > 0) log.info({ days: dropped.length }, "audit log: old days dropped");
    // A deleted guardrail's versions are kept exactly as long as the audit of its deletion.
    const versions = await new GuardrailVersions(this.db).purgeDeletedBefore(cutoff);
    if (versions > 0) log.info({ versions }, "versions of guardrails deleted long ago dropped");
    const policyVersions = await new PolicyVersions(this.db).purgeDeletedBefore(cutoff);
    if (policyVersions > 0)
      log.info({ versions: policyVersions }, "versions of policies deleted long ago dropped");
    return dropped;
  }

  /** Runs maintain() now and every hour until close(); a failure is logged and retried later. */
  start(): void {
    const run = () =>
      this.maintain().catch((err: unknown) =>
        log.warn({ err: String(err) }, "audit log maintenance failed; retried within the hour"),
      );
    void run();
    this.timer = setInterval(run, MAINTENANCE_EVERY_MS);
    this.timer.unref();
  }

  /** Writes what is queued (bounded by the writer's close time-out), then stops. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.writer.close();
  }
}
