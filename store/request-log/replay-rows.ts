import type { SqlDatabase } from "./database.js";

/** One recorded request as a what-if replay reads it: columns only, no record bytes decoded. */
export interface ReplayRow {
  id: string;
  atMs: number;
  keyHash: string;
  model: string;
  provider: string;
  status: string;
  refusalReason: string;
  decidedBy: string;
  byok: boolean;
  costUsd: number;
  characters: number;
  /** railgate.guardrail.v1.Region's number; 0 when not recorded. */
  dataRegion: number;
  /** endpoint_policy's bits (0007-replay-columns.ts); null when no endpoint served. */
  endpointPolicy: number | null;
  /** The governed_by entry that matched: "<source>:<guardrail id>". */
  governedAs: string;
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
  governed_as: string;
}

/**
 * The records a guardrail governed in [fromMs, toMs), oldest first, a page at a time (keyset
 * paging on created_at and id: the same SQL on PostgreSQL and PGlite, and memory bounded by the
 * page whatever the window holds). `labels` are the guardrail's governed_by entries, one per
 * source it can govern by.
 */
export async function* replayRows(
  db: SqlDatabase,
  workspaceId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  pageSize = 20_000,
): AsyncGenerator<ReplayRow[]> {
  let after: { at: string; id: string } | undefined;
  for (;;) {
    const params: unknown[] = [workspaceId, labels, new Date(fromMs).toISOString()];
    params.push(new Date(toMs).toISOString());
    let cursor = "";
    if (after) {
      params.push(after.at, after.id);
      cursor = "AND (created_at, id) > ($5::timestamptz, $6)";
    }
    const rows = await db.query<Row>(
      `SELECT id, extract(epoch FROM created_at) * 1000 AS at_ms, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at_text,
              key_hash, model, provider, status, refusal_reason, guardrail_id, byok, cost_usd,
              characters, data_region, endpoint_policy,
              (SELECT l FROM unnest(governed_by) AS l WHERE l = ANY($2::text[]) LIMIT 1) AS governed_as
         FROM generations
        WHERE workspace_id = $1 AND governed_by && $2::text[]
          AND created_at >= $3::timestamptz AND created_at < $4::timestamptz ${cursor}
        ORDER BY created_at, id
        LIMIT ${pageSize}`,
      params,
    );
    if (rows.length === 0) return;
    yield rows.map((r) => ({
      id: r.id,
      atMs: Number(r.at_ms),
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
    const last = rows[rows.length - 1] as Row & { at_text: string };
    after = { at: last.at_text, id: last.id };
  }
}
