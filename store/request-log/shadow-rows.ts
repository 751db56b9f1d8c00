import type { SqlDatabase } from "./database.js";

/** How often a guardrail's shadow decided differently, by live and shadow outcome. */
export interface ShadowChangeCount {
  live: string;
  shadow: string;
  count: number;
}

export interface ShadowReportRows {
  changes: ShadowChangeCount[];
  /** The newest records a shadow decided differently, newest first. */
  sample: string[];
}

const SINCE = `workspace_id = $1 AND shadow_guardrail_id = $2
  AND created_at >= 'epoch'::timestamptz + $3::float8 * interval '1 millisecond'`;

/**
 * The records of a workspace whose outcome the guardrail's shadow would have changed since a
 * time: counted by change in the database (the partial index holds only such records).
 */
export async function shadowReportRows(
  db: SqlDatabase,
  workspaceId: string,
  guardrailId: string,
  sinceMs: number,
  sampleSize: number,
): Promise<ShadowReportRows> {
  const params = [workspaceId, guardrailId, sinceMs];
  const [counts, sample] = await Promise.all([
    db.query<{ shadow_change: string; n: number }>(
      `SELECT shadow_change, count(*)::int4 AS n FROM generations WHERE ${SINCE}
       GROUP BY shadow_change ORDER BY shadow_change`,
      params,
    ),
    db.query<{ id: string }>(
      `SELECT id FROM generations WHERE ${SINCE} ORDER BY created_at DESC, id DESC LIMIT $4`,
      [...params, sampleSize],
    ),
  ]);
  return {
    changes: counts.map((r) => {
      const [live = "", shadow = ""] = r.shadow_change.split(">");
      return { live, shadow, count: r.n };
    }),
    sample: sample.map((r) => r.id),
  };
}

/** Which of `ids` (records of a workspace) were made at or after an instant. */
export async function recordsSince(
  db: SqlDatabase,
  workspaceId: string,
  ids: readonly string[],
  sinceMs: number,
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.query<{ id: string }>(
    `SELECT id FROM generations WHERE workspace_id = $1 AND id = ANY($2::text[])
       AND created_at >= 'epoch'::timestamptz + $3::float8 * interval '1 millisecond'`,
    [workspaceId, ids, sinceMs],
  );
  return new Set(rows.map((r) => r.id));
}
