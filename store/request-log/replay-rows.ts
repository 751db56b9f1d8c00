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

/**
 * The records a guardrail governed in [fromMs, toMs), oldest first, a page at a time (keyset
 * paging on created_at and id: the same SQL on PostgreSQL and PGlite, and memory bounded by the
 * page whatever the window holds). `labels` are the guardrail's governed_by entries, one per
 * source it can govern by. Times travel as float8 milliseconds (records are written to the
 * millisecond), cheaper to read back than a timestamp and exact as a cursor.
 */
export async function* replayRows(
  db: SqlDatabase,
  workspaceId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  pageSize = 50_000,
): AsyncGenerator<ReplayRow[]> {
  const which = labels.map((_, i) => `WHEN governed_by @> ARRAY[$${i + 5}::text] THEN ${i}`);
  let after: { atMs: number; id: string } | undefined;
  for (;;) {
    const params: unknown[] = [workspaceId, labels, fromMs, toMs, ...labels];
    let cursor = "";
    if (after) {
      params.push(after.atMs, after.id);
      const n = params.length;
      cursor = `AND (created_at, id) > ('epoch'::timestamptz + $${n - 1}::float8 * interval '1 millisecond', $${n})`;
    }
    const rows = await db.query<Row>(
      `SELECT id, (extract(epoch FROM created_at) * 1000)::float8 AS at_ms,
              key_hash, model, provider, status, refusal_reason, guardrail_id, byok, cost_usd,
              characters, data_region, endpoint_policy,
              CASE ${which.join(" ")} ELSE -1 END AS governed_as
         FROM generations
        WHERE workspace_id = $1 AND governed_by && $2::text[]
          AND created_at >= 'epoch'::timestamptz + $3::float8 * interval '1 millisecond'
          AND created_at < 'epoch'::timestamptz + $4::float8 * interval '1 millisecond' ${cursor}
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
