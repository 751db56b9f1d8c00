import type { SqlDatabase } from "./database.js";

/** Which of `labels` (parameters $5...) a record's governed_by holds, as its index. */
function governedAs(labelCount: number, t = ""): string {
  const which = Array.from(
    { length: labelCount },
    (_, i) => `WHEN ${t}governed_by @> ARRAY[$${i + 5}::text] THEN ${i}`,
  );
  return `CASE ${which.join(" ")} ELSE -1 END`;
}

/**
 * What a replay's rules read of a record, with NULLs folded into the value a replay reads them
 * as, so that records alike for the rules form one group and a group's key can be joined back
 * to its records with plain equality ($n is the replayed guardrail's id).
 */
export const groupColumns = (n: number, labelCount: number, t = ""): string =>
  `${t}model, ${t}provider, ${t}status, coalesce(${t}refusal_reason, '') AS refusal_reason,
   coalesce(${t}guardrail_id = $${n}, false) AS here, ${t}byok, ${t}cost_usd > 0 AS paid,
   coalesce(${t}data_region, 0) AS data_region, coalesce(${t}endpoint_policy, -1) AS endpoint_policy,
   ${governedAs(labelCount, t)} AS governed_as`;

export const WINDOW_WHERE = `workspace_id = $1 AND governed_by && $2::text[]
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
    refusal_reason: string;
    here: boolean;
    byok: boolean;
    paid: boolean;
    data_region: number;
    endpoint_policy: number;
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
       FROM (SELECT key_hash, tableoid AS part, ${groupColumns(params.length, labels.length)},
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
    refusalReason: r.refusal_reason,
    decidedHere: r.here,
    byok: r.byok,
    paid: r.paid,
    dataRegion: r.data_region,
    endpointPolicy: r.endpoint_policy < 0 ? null : r.endpoint_policy,
    governedAs: r.governed_as,
    count: Number(r.n),
    costUsd: r.spend,
    characters: Number(r.chars),
    someId: r.some_id,
  }));
}
