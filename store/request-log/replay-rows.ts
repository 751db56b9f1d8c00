import type { SqlDatabase } from "./database.js";

/** One recorded request as a what-if replay reads it: columns only, no record bytes decoded. */
export interface ReplayRow {
  id: string;
  atMs: number;
  keyHash: string;
  model: string;
  provider: string;
  status: string;
  /** Empty when none. */
  refusalReason: string;
  /** The guardrail that decided the recorded outcome; empty when none did. */
  decidedBy: string;
  byok: boolean;
  costUsd: number;
  characters: number;
  /** railgate.guardrail.v1.Region's number; 0 when not recorded. */
  dataRegion: number;
  /** endpoint_policy's bits (0007-replay-columns.ts); null when no endpoint served. */
  endpointPolicy: number | null;
  /** The index in `labels` of the governed_by entry that matched (how the guardrail governed). */
  governedAs: number;
}

interface Row {
  id: string;
  at_ms: number;
  key_hash: string;
  model: string;
  provider: string;
  status: string;
  refusal_reason: string | null;
  guardrail_id: string | null;
  byok: boolean;
  cost_usd: number;
  characters: number;
  data_region: number | null;
  endpoint_policy: number | null;
  governed_as: number;
}

const DAY_MS = 86_400_000;

/** Which of `labels` (parameters $5...) a record's governed_by holds, as its index. */
function governedAs(labels: readonly string[]): string {
  const which = labels.map((_, i) => `WHEN governed_by @> ARRAY[$${i + 5}::text] THEN ${i}`);
  return `CASE ${which.join(" ")} ELSE -1 END`;
}

const WINDOW_WHERE = `workspace_id = $1 AND governed_by && $2::text[]
          AND created_at >= 'epoch'::timestamptz + $3::float8 * interval '1 millisecond'
          AND created_at < 'epoch'::timestamptz + $4::float8 * interval '1 millisecond'`;

/** Records alike in everything a replay's rules read, of one key on one UTC day. */
export interface ReplayGroup {
  keyHash: string;
  day: number;
  model: string;
  provider: string;
  status: string;
  refusalReason: string;
  /** The replayed guardrail decided their recorded outcome. */
  decidedHere: boolean;
  byok: boolean;
  paid: boolean;
  dataRegion: number;
  endpointPolicy: number | null;
  governedAs: number;
  count: number;
  costUsd: number;
  characters: number;
  /** One of them, for a sample. */
  someId: string;
}

/**
 * The records a guardrail governed in [fromMs, toMs), added up in the database by key, UTC day
 * and everything a rule reads: a replay decides each group once, and reads records one by one
 * only where order matters (a budget window its requests overflow).
 */
export async function replayGroups(
  db: SqlDatabase,
  workspaceId: string,
  guardrailId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
): Promise<ReplayGroup[]> {
  const params: unknown[] = [workspaceId, labels, fromMs, toMs, ...labels, guardrailId];
  const rows = await db.query<{
    key_hash: string;
    day: number;
    model: string;
    provider: string;
    status: string;
    refusal_reason: string | null;
    here: boolean | null;
    byok: boolean;
    paid: boolean;
    data_region: number | null;
    endpoint_policy: number | null;
    governed_as: number;
    n: number;
    spend: number;
    chars: number;
    some_id: string;
  }>(
    // Grouped by partition rather than by a day computed per record: each partition is one UTC
    // day (partitions.ts names it generations_pYYYYMMDD), and the planner, which cannot
    // estimate how many days an expression yields, would sort a million records on disk
    // instead of hashing them into a few thousand groups.
    `SELECT key_hash, to_date(right(part::regclass::text, 8), 'YYYYMMDD') - date '1970-01-01' AS day,
            model, provider, status, refusal_reason, here, byok, paid, data_region,
            endpoint_policy, governed_as, n, spend, chars, some_id
       FROM (SELECT key_hash, tableoid AS part, model, provider, status, refusal_reason,
                    guardrail_id = $${params.length} AS here, byok, cost_usd > 0 AS paid,
                    data_region, endpoint_policy, ${governedAs(labels)} AS governed_as,
                    count(*)::int8 AS n, sum(cost_usd)::float8 AS spend,
                    sum(characters)::int8 AS chars, min(id COLLATE "C") AS some_id
               FROM generations
              WHERE ${WINDOW_WHERE}
              GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12) AS g`,
    params,
  );
  return rows.map((r) => ({
    keyHash: r.key_hash,
    day: r.day,
    model: r.model,
    provider: r.provider,
    status: r.status,
    refusalReason: r.refusal_reason ?? "",
    decidedHere: r.here === true,
    byok: r.byok,
    paid: r.paid,
    dataRegion: r.data_region ?? 0,
    endpointPolicy: r.endpoint_policy,
    governedAs: r.governed_as,
    count: Number(r.n),
    costUsd: r.spend,
    characters: Number(r.chars),
    someId: r.some_id,
  }));
}

/**
 * The records a guardrail governed in [fromMs, toMs), oldest first, of the keys named for each
 * UTC day (day number -> key hashes). Read a day at a time (each day is one partition, so a
 * query reads one partition) and, within a day, a page at a time (keyset paging on created_at
 * and id): the same SQL on PostgreSQL and PGlite, and memory bounded by the page. Times travel
 * as float8 milliseconds (records are written to the millisecond), cheaper to read back than a
 * timestamp and exact as a cursor.
 */
export async function* replayRows(
  db: SqlDatabase,
  workspaceId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  keysByDay: ReadonlyMap<number, readonly string[]>,
  pageSize = 50_000,
): AsyncGenerator<ReplayRow[]> {
  const days = [...keysByDay.keys()].sort((a, b) => a - b);
  for (const day of days) {
    const from = Math.max(fromMs, day * DAY_MS);
    const to = Math.min(toMs, (day + 1) * DAY_MS);
    if (from >= to) continue;
    yield* dayRows(db, workspaceId, labels, from, to, keysByDay.get(day) ?? [], pageSize);
  }
}

async function* dayRows(
  db: SqlDatabase,
  workspaceId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  keyHashes: readonly string[],
  pageSize: number,
): AsyncGenerator<ReplayRow[]> {
  let after: { atMs: number; id: string } | undefined;
  for (;;) {
    const params: unknown[] = [workspaceId, labels, fromMs, toMs, ...labels, keyHashes];
    // A semi-join hashes the keys; "= ANY" would compare each record with each key.
    const keys = `AND key_hash IN (SELECT unnest($${params.length}::text[]))`;
    let cursor = "";
    if (after) {
      params.push(after.atMs, after.id);
      const n = params.length;
      cursor = `AND (created_at, id) > ('epoch'::timestamptz + $${n - 1}::float8 * interval '1 millisecond', $${n})`;
    }
    const rows = await db.query<Row>(
      `SELECT id, date_part('epoch', created_at) * 1000 AS at_ms,
              key_hash, model, provider, status, refusal_reason, guardrail_id, byok, cost_usd,
              characters, data_region, endpoint_policy, ${governedAs(labels)} AS governed_as
         FROM generations
        WHERE ${WINDOW_WHERE} ${keys} ${cursor}
        ORDER BY created_at, id
        LIMIT ${pageSize}`,
      params,
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      atMs: r.at_ms,
      keyHash: r.key_hash,
      model: r.model,
      provider: r.provider,
      status: r.status,
      refusalReason: r.refusal_reason ?? "",
      decidedBy: r.guardrail_id ?? "",
      byok: r.byok,
      costUsd: r.cost_usd,
      characters: r.characters,
      dataRegion: r.data_region ?? 0,
      endpointPolicy: r.endpoint_policy,
      governedAs: r.governed_as,
    }));
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1] as Row;
    after = { atMs: last.at_ms, id: last.id };
  }
}
