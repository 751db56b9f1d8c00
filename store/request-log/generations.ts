import {
  create,
  fromBinary,
  fromJson,
  type JsonObject,
  toBinary,
  toJson,
} from "@bufbuild/protobuf";
import { StructSchema, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { GENERATION_STATUSES, NEVER_SERVED } from "../../domain/enums.js";
import type { UsageGroup } from "../../domain/usage-groups.js";
import { FilterAction } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type DataPolicy,
  DataPolicySchema,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import type { SqlDatabase } from "./database.js";
import { containing, countMatches, type MatchCount } from "./match-count.js";
import {
  DayPartitions,
  dropDayPartitionsBefore,
  ensureDayPartitions,
  utcDay,
} from "./partitions.js";
import { expireReplayInputs } from "./replay-inputs.js";

const TABLE = "generations";
const DAY_MS = 86_400_000;

/**
 * Content-filter actions as bits of filter_actions (a request can redact and flag at once); the
 * usage series count them by these same bits.
 */
const ACTION_BITS: Readonly<Record<FilterAction, number>> = {
  [FilterAction.UNSPECIFIED]: 0,
  [FilterAction.BLOCK]: 1,
  [FilterAction.REDACT]: 2,
  [FilterAction.FLAG]: 4,
};

/** Who may see what: a workspace (undefined = every one) and, for a standard key, its own records. */
export interface LogScope {
  workspaceId?: string;
  keyHash?: string;
}

export interface ListQuery extends LogScope {
  limit: number;
  cursor?: Cursor;
  model?: string;
  provider?: string;
  status?: GenerationStatus;
  /** A content filter of this action acted. */
  outcome?: FilterAction;
  guardrailId?: string;
  /** Refused requests of this reason. */
  refusalReason?: string;
  /** Decided by this guardrail policy. */
  policyId?: string;
  /** Inclusive lower and exclusive upper bound on created_at, ms since the epoch. */
  fromMs?: number;
  toMs?: number;
  search?: Search;
}

/**
 * What a search matches: a record whose id is `text`, whose model contains it, or made with one
 * of `keyHashes` (the keys whose names contain it, found by the caller in the store).
 */
export interface Search {
  text: string;
  keyHashes: readonly string[];
}

/** Where the previous page stopped: its last record's time and id (keyset paging). */
export interface Cursor {
  atMs: number;
  id: string;
}

/** Thrown for a cursor this code did not make; the service answers 400 naming `cursor`. */
export class BadCursor extends Error {}

export function encodeCursor(c: Cursor): string {
  return Buffer.from(JSON.stringify([c.atMs, c.id]), "utf8").toString("base64url");
}

export function decodeCursor(raw: string): Cursor {
  try {
    const value: unknown = JSON.parse(Buffer.from(raw, "base64url").toString("utf8"));
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === "string" &&
      value[1].length <= 200
    ) {
      return { atMs: value[0], id: value[1] };
    }
  } catch {
    // Falls through to the refusal below.
  }
  throw new BadCursor("cursor is not one this API returned (pass next_cursor back unchanged)");
}

export interface ActivityRow {
  date: string;
  /** Set when asked for per workspace. */
  workspaceId?: string;
  model: string;
  provider: string;
  usage: number;
  byokUsage: number;
  requests: number;
  characters: number;
}

/** The column each group adds up by (from this table only: never text from a request). */
const GROUP_COLUMNS: Record<UsageGroup, string> = {
  key: "key_hash",
  guardrail: "coalesce(guardrail_id, '')",
  model: "model",
  provider: "provider",
  workspace: "workspace_id",
  status: "status",
};

export interface UsageRow {
  bucketMs: number;
  group: string;
  requests: number;
  spendUsd: number;
  ttfbP50Ms: number | null;
  ttfbP95Ms: number | null;
  blocked: number;
  redacted: number;
  flagged: number;
  /** Requests refused, by refusal reason (none: an empty object). */
  refusedByReason: Record<string, number>;
}

interface GenerationRow {
  id: string;
  created_at: Date;
  workspace_id: string;
  key_hash: string;
  model: string;
  provider: string;
  status: string;
  refusal_reason: string | null;
  byok: boolean;
  cost_usd: number;
  characters: number;
  ttfb_ms: number | null;
  guardrail_id: string | null;
  policy_id: string | null;
  record: Uint8Array;
  trace: Uint8Array | null;
  governed_by: string[] | null;
  data_region: number | null;
  endpoint_policy: number | null;
}

const COLUMNS =
  "id, created_at, workspace_id, key_hash, model, provider, status, refusal_reason, byok, cost_usd, characters, ttfb_ms, filter_actions, guardrail_id, policy_id, record, trace, governed_by, data_region, endpoint_policy, shadow_guardrail_id, shadow_change, replay_detections, replay_input, replay_input_until";
/**
 * What a read of records selects: the columns fromRow reads, never the replay data (an input
 * kept for a replay is read by the replay alone, and no API answer carries it).
 */
const READ_COLUMNS =
  "id, created_at, workspace_id, key_hash, model, provider, status, refusal_reason, byok, cost_usd, characters, ttfb_ms, guardrail_id, policy_id, record, trace, governed_by, data_region, endpoint_policy";
/** Each column's type, in COLUMNS' order: a batch travels as one array per column. */
const COLUMN_TYPES = [
  "text",
  "timestamptz",
  "text",
  "text",
  "text",
  "text",
  "text",
  "text",
  "boolean",
  "float8",
  "int4",
  "float4",
  "int2",
  "text",
  "text",
  "bytea",
  "bytea",
  // governed_by: joined by commas (no id or source name holds one), split in the statement,
  // since unnest cannot take an array of arrays of different lengths.
  "text",
  "int2",
  "int2",
  "text",
  "text",
  // replay_detections: JSON text, cast in the statement (an array of jsonb travels as text).
  "text",
  "bytea",
  "timestamptz",
] as const;
const GOVERNED_BY = 17;
const REPLAY_DETECTIONS = 22;

/** The served endpoint's data policy as the endpoint_policy column's bits. */
function dataPolicyBits(p: DataPolicy): number {
  return (
    (p.zeroDataRetention ? 1 : 0) |
    (p.safetyRetention ? 2 : 0) |
    (p.trainsOnData ? 4 : 0) |
    (p.publishesPrompts ? 8 : 0)
  );
}

function dataPolicyOf(bits: number): DataPolicy {
  return create(DataPolicySchema, {
    zeroDataRetention: (bits & 1) !== 0,
    safetyRetention: (bits & 2) !== 0,
    trainsOnData: (bits & 4) !== 0,
    publishesPrompts: (bits & 8) !== 0,
  });
}

/**
 * One statement for every batch size: one array parameter per column, unnested into rows,
 * rather than 16 parameters per row. The database parses and plans the same short text each
 * time, and the client serializes 16 values instead of 16 per record: measured on the embedded
 * PGlite (where PostgreSQL runs on the writing process's own thread), about a quarter less CPU
 * per record at batches of 100.
 */
const INSERT_SQL = `INSERT INTO ${TABLE} (${COLUMNS}) SELECT ${COLUMN_TYPES.map((_, i) => (i === GOVERNED_BY ? `string_to_array(c${i}, ',')` : i === REPLAY_DETECTIONS ? `c${i}::jsonb` : `c${i}`)).join(", ")} FROM unnest(${COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(", ")}) AS u(${COLUMN_TYPES.map((_, i) => `c${i}`).join(", ")}) ON CONFLICT (id, created_at) DO NOTHING`;

/**
 * The bytes of a record without what has a column (read back from the columns) and without its
 * trace (its own column): about a third of the generation's full binary.
 */
function rest(g: Generation): Uint8Array {
  // One scratch message, filled and encoded synchronously: no allocation per record but the
  // bytes (this runs for every request the speech service serves).
  const m = scratch;
  m.format = g.format;
  m.durationSeconds = g.durationSeconds;
  m.sessionId = g.sessionId;
  m.user = g.user;
  m.filterOutcomes = g.filterOutcomes;
  m.bytes = g.bytes;
  m.voice = g.voice;
  m.speed = g.speed;
  // Which endpoints were tried and why: read with the record, never queried by, so no column.
  m.routing = g.routing;
  m.cached = g.cached;
  m.cacheDiscount = g.cacheDiscount;
  m.refusalMessage = g.refusalMessage;
  m.budgetRefusal = g.budgetRefusal;
  m.shadowOutcome = g.shadowOutcome;
  const bytes = toBinary(GenerationSchema, m);
  m.filterOutcomes = [];
  m.routing = [];
  m.budgetRefusal = undefined;
  m.shadowOutcome = undefined;
  return bytes;
}

const scratch = create(GenerationSchema);

function filterActions(g: Generation): number {
  let bits = 0;
  for (const o of g.filterOutcomes) bits |= ACTION_BITS[o.action] ?? 0;
  return bits;
}

function createdMs(g: Generation): number {
  return g.createdAt ? timestampMs(g.createdAt) : 0;
}

/** The shadow_change column: how a shadow's outcome differs from the live one. */
export function shadowChange(live: string, shadow: string): string {
  return `${live}>${shadow}`;
}

/**
 * What a record keeps for a what-if replay of content filters, beside the record and never part
 * of it (no API reads these columns back): its workspace's replay_data decides which.
 */
export interface RecordReplayData {
  /** Builtin detector matches by slug (governance/replay-data/detections.ts). */
  detections?: Readonly<Record<string, number>>;
  /** The input, sealed (governance/replay-data/sealed-input.ts), and until when it is kept. */
  input?: { sealed: Uint8Array; untilMs: number };
}

/** Appends one record to the column arrays of a batch (COLUMNS' order). */
function pushRow(columns: unknown[][], g: Generation, replay: RecordReplayData | undefined): void {
  const values = [
    g.id,
    new Date(createdMs(g)).toISOString(),
    g.workspaceId,
    g.keyHash,
    g.model,
    g.provider,
    // The column holds the status's API name: the SQL, its indexes and the usage groups read text.
    GENERATION_STATUSES.name(g.status) ?? "",
    g.refusalReason || null,
    g.byok,
    g.costUsd,
    g.characters,
    g.timeToFirstByteMs > 0 ? g.timeToFirstByteMs : null,
    filterActions(g),
    g.guardrailId || null,
    g.policyId || null,
    rest(g),
    g.trace ? toBinary(StructSchema, fromJson(StructSchema, g.trace)) : null,
    g.governedBy.length > 0 ? g.governedBy.join(",") : null,
    g.dataRegion,
    g.servedDataPolicy ? dataPolicyBits(g.servedDataPolicy) : null,
    g.shadowOutcome?.guardrailId || null,
    g.shadowOutcome ? shadowChange(g.shadowOutcome.live, g.shadowOutcome.shadow) : null,
    replay?.detections ? JSON.stringify(replay.detections) : null,
    replay?.input?.sealed ?? null,
    replay?.input ? new Date(replay.input.untilMs).toISOString() : null,
  ];
  for (let i = 0; i < values.length; i++) (columns[i] as unknown[]).push(values[i]);
}

/**
 * A time to first byte as the record keeps it: rounded to 10 us. The `ttfb_ms` column is a
 * `real` (about 7 significant digits), so an unrounded value read back from the database
 * differs from the same record read while still queued (22.155690999999933 vs 22.155691);
 * rounded, any value under 100 s reads back exactly.
 */
export function recordedMs(ms: number): number {
  return Math.round(ms * 100) / 100;
}

function fromRow(r: GenerationRow): Generation {
  const g = fromBinary(GenerationSchema, r.record);
  g.id = r.id;
  g.createdAt = timestampFromMs(r.created_at.getTime());
  g.workspaceId = r.workspace_id;
  g.keyHash = r.key_hash;
  g.model = r.model;
  g.provider = r.provider;
  g.status = GENERATION_STATUSES.is(r.status)
    ? GENERATION_STATUSES.value(r.status)
    : GenerationStatus.UNSPECIFIED;
  g.refusalReason = r.refusal_reason ?? "";
  g.byok = r.byok;
  g.costUsd = r.cost_usd;
  g.characters = r.characters;
  g.timeToFirstByteMs = r.ttfb_ms ?? 0;
  g.guardrailId = r.guardrail_id ?? "";
  g.policyId = r.policy_id ?? "";
  g.governedBy = r.governed_by ?? [];
  g.dataRegion = r.data_region ?? 0;
  if (r.endpoint_policy !== null) g.servedDataPolicy = dataPolicyOf(r.endpoint_policy);
  if (r.trace) g.trace = toJson(StructSchema, fromBinary(StructSchema, r.trace)) as JsonObject;
  return g;
}

/** Builds a WHERE clause with numbered parameters. */
class Where {
  readonly params: unknown[] = [];
  private readonly parts: string[] = [];
  add(sql: (p: (value: unknown) => string) => string): void {
    this.parts.push(
      sql((value) => {
        this.params.push(value);
        return `$${this.params.length}`;
      }),
    );
  }
  scope(s: LogScope): void {
    if (s.workspaceId !== undefined) this.add((p) => `workspace_id = ${p(s.workspaceId)}`);
    if (s.keyHash !== undefined) this.add((p) => `key_hash = ${p(s.keyHash)}`);
  }
  range(fromMs: number | undefined, toMs: number | undefined): void {
    if (fromMs !== undefined) this.add((p) => `created_at >= ${p(new Date(fromMs).toISOString())}`);
    if (toMs !== undefined) this.add((p) => `created_at < ${p(new Date(toMs).toISOString())}`);
  }
  get sql(): string {
    return this.parts.length === 0 ? "" : `WHERE ${this.parts.join(" AND ")}`;
  }
}

/** The WHERE clause of a list's filters (its cursor aside). */
function listWhere(q: ListQuery): Where {
  const where = new Where();
  where.scope(q);
  if (q.model !== undefined) where.add((p) => `model = ${p(q.model)}`);
  if (q.provider !== undefined) where.add((p) => `provider = ${p(q.provider)}`);
  const status = GENERATION_STATUSES.name(q.status);
  if (status !== undefined) where.add((p) => `status = ${p(status)}`);
  const bit = q.outcome === undefined ? 0 : (ACTION_BITS[q.outcome] ?? 0);
  if (bit !== 0) {
    // "filter_actions <> 0" is implied by the bit test but spelled out: the planner matches
    // it to the partial index generations_filtered_time.
    where.add((p) => `filter_actions <> 0 AND (filter_actions & ${p(bit)}) <> 0`);
  }
  if (q.guardrailId !== undefined) where.add((p) => `guardrail_id = ${p(q.guardrailId)}`);
  if (q.policyId !== undefined) where.add((p) => `policy_id = ${p(q.policyId)}`);
  if (q.refusalReason !== undefined) {
    // Spelled "status = 'refused'" too: the planner matches it to generations_refused_time.
    where.add((p) => `status = 'refused' AND refusal_reason = ${p(q.refusalReason)}`);
  }
  const search = q.search;
  if (search) {
    where.add((p) => {
      const keys =
        search.keyHashes.length > 0 ? ` OR key_hash = ANY(${p(search.keyHashes)}::text[])` : "";
      return `(id = ${p(search.text)} OR model ILIKE ${p(containing(search.text))}${keys})`;
    });
  }
  where.range(q.fromMs, q.toMs);
  return where;
}

/**
 * The request log's table: writes (batched by the caller, idempotent by id), the lookups and
 * lists of the API, activity and usage series, and retention. One SQL for PostgreSQL and PGlite.
 */
export class GenerationRecords {
  private readonly partitions: DayPartitions;

  constructor(private readonly db: SqlDatabase) {
    this.partitions = new DayPartitions(db, TABLE);
  }

  /**
   * Inserts a batch; a record already there (a retried batch) is left as it is. `replayOf`
   * gives what a record keeps for a what-if replay, when its workspace keeps any.
   */
  async insert(
    batch: readonly Generation[],
    replayOf?: (g: Generation) => RecordReplayData | undefined,
  ): Promise<void> {
    if (batch.length === 0) return;
    await this.partitions.ensure(batch.map(createdMs));
    const columns: unknown[][] = COLUMN_TYPES.map(() => []);
    for (const g of batch) pushRow(columns, g, replayOf?.(g));
    await this.db.query(INSERT_SQL, columns);
  }

  /**
   * Each key's newest record (when it was last used), by hash; a key without one is absent. One
   * index probe per key and day partition (generations_key_time), whatever the keys' traffic.
   */
  async lastUsed(keyHashes: readonly string[]): Promise<Map<string, number>> {
    if (keyHashes.length === 0) return new Map();
    const rows = await this.db.query<{ key_hash: string; at: Date | string | null }>(
      `SELECT k.key_hash, (SELECT created_at FROM ${TABLE} g WHERE g.key_hash = k.key_hash
         ORDER BY created_at DESC LIMIT 1) AS at
       FROM unnest($1::text[]) AS k(key_hash)`,
      [[...new Set(keyHashes)]],
    );
    const out = new Map<string, number>();
    for (const r of rows) if (r.at !== null) out.set(r.key_hash, new Date(r.at).getTime());
    return out;
  }

  /**
   * The budgets that refused a workspace's requests since `sinceMs`: per deciding guardrail (or
   * policy) and key, the newest such refusal (the partial index generations_refused_time).
   */
  async budgetRefusalsSince(
    workspaceId: string,
    sinceMs: number,
  ): Promise<{ guardrailId: string; keyHash: string; atMs: number }[]> {
    const rows = await this.db.query<{ guardrail_id: string; key_hash: string; at: Date | string }>(
      `SELECT guardrail_id, key_hash, max(created_at) AS at FROM ${TABLE}
       WHERE workspace_id = $1 AND status = 'refused' AND refusal_reason = 'budget_exceeded'
         AND created_at >= $2 AND guardrail_id IS NOT NULL
       GROUP BY guardrail_id, key_hash`,
      [workspaceId, new Date(sinceMs).toISOString()],
    );
    return rows.map((r) => ({
      guardrailId: r.guardrail_id,
      keyHash: r.key_hash,
      atMs: new Date(r.at).getTime(),
    }));
  }

  async get(id: string, scope: LogScope): Promise<Generation | undefined> {
    const where = new Where();
    where.add((p) => `id = ${p(id)}`);
    where.scope(scope);
    const rows = await this.db.query<GenerationRow>(
      `SELECT ${READ_COLUMNS} FROM ${TABLE} ${where.sql} LIMIT 1`,
      where.params,
    );
    return rows[0] && fromRow(rows[0]);
  }

  /** Newest first; `next` is set when more records follow this page. */
  async list(q: ListQuery): Promise<{ items: Generation[]; next?: Cursor }> {
    const where = listWhere(q);
    const cursor = q.cursor;
    if (cursor) {
      where.add(
        (p) =>
          `(created_at, id) < (${p(new Date(cursor.atMs).toISOString())}::timestamptz, ${p(cursor.id)})`,
      );
    }
    const rows = await this.db.query<GenerationRow>(
      `SELECT ${READ_COLUMNS} FROM ${TABLE} ${where.sql} ORDER BY created_at DESC, id DESC LIMIT ${q.limit + 1}`,
      where.params,
    );
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      items: page.map(fromRow),
      next:
        rows.length > q.limit && last
          ? { atMs: last.created_at.getTime(), id: last.id }
          : undefined,
    };
  }

  /**
   * How many records the list's filters match (its cursor aside): counted, up to
   * COUNT_EXACT_MAX; past it, the planner's estimate (never below the count so far).
   */
  async count(q: ListQuery): Promise<MatchCount> {
    const where = listWhere(q);
    return countMatches(this.db, `FROM ${TABLE} ${where.sql}`, where.params);
  }

  /**
   * Served requests per UTC day, model and provider (and workspace, when asked) in
   * [fromMs, toMs), newest day first.
   */
  async activity(
    scope: LogScope,
    fromMs: number,
    toMs: number,
    byWorkspace = false,
  ): Promise<ActivityRow[]> {
    const where = new Where();
    where.scope(scope);
    where.range(fromMs, toMs);
    // Requests that never reached a provider (refused, or the store was down) are no activity.
    where.add(() => `status NOT IN (${NEVER_SERVED.map((s) => `'${s}'`).join(", ")})`);
    const rows = await this.db.query<{
      date: string;
      ws: string | null;
      model: string;
      provider: string;
      usage: number | null;
      byok_usage: number | null;
      requests: number;
      characters: number;
    }>(
      `SELECT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS date,
              ${byWorkspace ? "workspace_id" : "NULL::text"} AS ws, model, provider,
              sum(cost_usd) FILTER (WHERE NOT byok) AS usage,
              sum(cost_usd) FILTER (WHERE byok) AS byok_usage,
              count(*) AS requests, sum(characters)::int8 AS characters
         FROM ${TABLE} ${where.sql}
        GROUP BY 1, 2, 3, 4 ORDER BY 1 DESC, 2, 3, 4`,
      where.params,
    );
    return rows.map((r) => ({
      date: r.date,
      ...(r.ws === null ? {} : { workspaceId: r.ws }),
      model: r.model,
      provider: r.provider,
      usage: r.usage ?? 0,
      byokUsage: r.byok_usage ?? 0,
      requests: Number(r.requests),
      characters: Number(r.characters),
    }));
  }

  /** Requests, spend, time to first byte and filter actions per bucket and group, oldest first. */
  async usage(
    scope: LogScope,
    granularity: "hour" | "day",
    group: UsageGroup,
    fromMs: number,
    toMs: number,
  ): Promise<UsageRow[]> {
    const where = new Where();
    where.scope(scope);
    where.range(fromMs, toMs);
    const unit = where.params.push(granularity);
    const rows = await this.db.query<{
      bucket: Date;
      grp: string;
      requests: number;
      spend: number;
      p50: number | null;
      p95: number | null;
      blocked: number;
      redacted: number;
      flagged: number;
    }>(
      `SELECT date_trunc($${unit}, created_at, 'UTC') AS bucket, ${GROUP_COLUMNS[group]} AS grp,
              count(*) AS requests, sum(cost_usd) AS spend,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY ttfb_ms) AS p50,
              percentile_cont(0.95) WITHIN GROUP (ORDER BY ttfb_ms) AS p95,
              count(*) FILTER (WHERE filter_actions & 1 <> 0) AS blocked,
              count(*) FILTER (WHERE filter_actions & 2 <> 0) AS redacted,
              count(*) FILTER (WHERE filter_actions & 4 <> 0) AS flagged
         FROM ${TABLE} ${where.sql}
        GROUP BY 1, 2 ORDER BY 1, 2`,
      where.params,
    );
    // Refusals by reason, per bucket and group: a second, small read of the refused records only.
    where.add(() => "status = 'refused'");
    const refusals = await this.db.query<{
      bucket: Date;
      grp: string;
      reason: string | null;
      n: number;
    }>(
      `SELECT date_trunc($${unit}, created_at, 'UTC') AS bucket, ${GROUP_COLUMNS[group]} AS grp,
              refusal_reason AS reason, count(*) AS n
         FROM ${TABLE} ${where.sql}
        GROUP BY 1, 2, 3`,
      where.params,
    );
    const refused = new Map<string, Record<string, number>>();
    for (const r of refusals) {
      const at = `${r.bucket.getTime()}/${r.grp}`;
      const byReason = refused.get(at) ?? {};
      byReason[r.reason ?? "unspecified"] = Number(r.n);
      refused.set(at, byReason);
    }
    return rows.map((r) => ({
      bucketMs: r.bucket.getTime(),
      group: r.grp,
      requests: Number(r.requests),
      spendUsd: r.spend ?? 0,
      ttfbP50Ms: r.p50,
      ttfbP95Ms: r.p95,
      blocked: Number(r.blocked),
      redacted: Number(r.redacted),
      flagged: Number(r.flagged),
      refusedByReason: refused.get(`${r.bucket.getTime()}/${r.grp}`) ?? {},
    }));
  }

  /**
   * Maintenance (every replica, hourly; the advisory locks make it safe): creates the
   * partitions of today and the next two days ahead, and drops those wholly older than the
   * retention. Returns the days dropped.
   */
  async maintain(nowMs: number, retentionDays: number): Promise<number[]> {
    const today = utcDay(nowMs);
    await ensureDayPartitions(this.db, TABLE, [today, today + DAY_MS, today + 2 * DAY_MS]);
    const dropped = await dropDayPartitionsBefore(
      this.db,
      TABLE,
      new Date(nowMs - retentionDays * DAY_MS),
    );
    this.partitions.forget(dropped);
    await expireReplayInputs(this.db, nowMs);
    return dropped;
  }
}
