/**
 * How many records a list matches, as the request log's and the audit log's lists answer it:
 * counted exactly up to COUNT_EXACT_MAX (an index walk that stops there), past it the
 * planner's estimate of the same query, marked as one.
 */
export interface MatchCount {
  total: number;
  estimate: boolean;
}

export const COUNT_EXACT_MAX = 10_000;

interface Queryable {
  query<T>(sql: string, params?: unknown[]): Promise<T[]>;
}

/** Counts `SELECT 1 <from>` (a FROM and WHERE clause with its parameters). */
export async function countMatches(
  db: Queryable,
  from: string,
  params: unknown[],
): Promise<MatchCount> {
  const rows = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM (SELECT 1 ${from} LIMIT ${COUNT_EXACT_MAX + 1}) AS matches`,
    params,
  );
  const counted = Number(rows[0]?.n ?? 0);
  if (counted <= COUNT_EXACT_MAX) return { total: counted, estimate: false };
  const plan = await db.query<{ "QUERY PLAN": unknown }>(
    `EXPLAIN (FORMAT JSON) SELECT 1 ${from}`,
    params,
  );
  return { total: Math.max(counted, plannedRows(plan[0]?.["QUERY PLAN"])), estimate: true };
}

/** The row count of the top node of an EXPLAIN (FORMAT JSON) answer; 0 when it has none. */
function plannedRows(plan: unknown): number {
  const doc = typeof plan === "string" ? (JSON.parse(plan) as unknown) : plan;
  const top = Array.isArray(doc) ? (doc[0] as { Plan?: { "Plan Rows"?: unknown } }) : undefined;
  const rows = top?.Plan?.["Plan Rows"];
  return typeof rows === "number" ? Math.round(rows) : 0;
}

/** `text` as a LIKE pattern that matches it literally anywhere (its `%`, `_` and `\` escaped). */
export function containing(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
