import type { SqlDatabase } from "./database.js";
import { groupColumns, type ReplayGroup, WINDOW_WHERE } from "./replay-rows.js";

/** A group of records whose outcome the proposed budget decides, and how it charges them. */
export interface BudgetGroup {
  group: ReplayGroup;
  /** The one or two spend counters ("entity|window") its requests are checked and charged against. */
  counters: readonly [string] | readonly [string, string];
  /** The price per million characters a request is charged at; null: its recorded cost. */
  pricePerMillion: number | null;
  /** False when the budget charges these requests nothing (BYOK it does not count). */
  charged: boolean;
}

/**
 * What the database decided, or left to the caller: "admitted" and "refused" are records of
 * one group added up (`count` of them, costs and characters summed, `id` one of them);
 * "ordered" is one record whose outcome depends on which earlier ones were refused, handed over
 * oldest first after every added-up part.
 */
export interface BudgetPart {
  kind: "admitted" | "refused" | "ordered";
  /** The index of its group in the list given. */
  group: number;
  count: number;
  id: string;
  /** The record's time (for "ordered"; 0 for the others). */
  atMs: number;
  costUsd: number;
  characters: number;
  /** What the budget charges them, in micro-dollars. */
  micros: number;
}

const KINDS = ["admitted", "refused", "ordered"] as const;

/**
 * Replays the budget in the database for the given groups' records: each counter's spend runs
 * (a window sum, oldest first) as if every request were admitted. A request whose every counter
 * stays below the limit is admitted whatever came before it (refusals only lower the spend), and
 * one that no longer fits beside what those sure admissions already spent on one of its counters
 * is refused whatever came before it; only the rest, after a counter's first crossing, is read
 * record by record, with the few columns the caller needs, through a cursor a page at a time.
 * The caller starts each counter at the micros of its admitted parts, then replays the ordered
 * records in turn: exact, since the sure admissions of a counter come before its first crossing.
 */
export async function replayBudget(
  db: SqlDatabase,
  workspaceId: string,
  guardrailId: string,
  labels: readonly string[],
  fromMs: number,
  toMs: number,
  limitMicros: number,
  groups: readonly BudgetGroup[],
  visit: (part: BudgetPart) => void,
  pageSize = 20_000,
): Promise<void> {
  if (groups.length === 0) return;
  const params: unknown[] = [workspaceId, labels, fromMs, toMs, ...labels, guardrailId];
  const idParam = params.length;
  const g = groups.map((x) => x.group);
  // Counters travel as numbers: the window sums sort every record by its counter.
  const counterIds = new Map<string, number>();
  for (const x of groups)
    for (const c of x.counters) if (!counterIds.has(c)) counterIds.set(c, counterIds.size);
  // The groups travel as one array per column, unnested into a table to join the records to.
  const table: [unknown[], string][] = [
    [groups.map((_, i) => i), "int4"],
    [g.map((x) => x.keyHash), "text"],
    [g.map((x) => x.day), "int4"],
    [g.map((x) => x.model), "text"],
    [g.map((x) => x.provider), "text"],
    [g.map((x) => x.status), "text"],
    [g.map((x) => x.refusalReason), "text"],
    [g.map((x) => x.decidedHere), "bool"],
    [g.map((x) => x.byok), "bool"],
    [g.map((x) => x.paid), "bool"],
    [g.map((x) => x.dataRegion), "int4"],
    [g.map((x) => x.endpointPolicy ?? -1), "int4"],
    [g.map((x) => x.governedAs), "int4"],
    [groups.map((x) => counterIds.get(x.counters[0])), "int4"],
    [
      groups.map((x) => (x.counters[1] === undefined ? null : counterIds.get(x.counters[1]))),
      "int4",
    ],
    [groups.map((x) => x.pricePerMillion), "float8"],
    [groups.map((x) => x.charged), "bool"],
  ];
  const columns = table.map(([values, type]) => {
    params.push(values);
    return `$${params.length}::${type}[]`;
  });
  params.push(limitMicros);
  const limit = `$${params.length}::float8`;
  // A second counter (a member's beside the key's) costs a second sort: only when one has it.
  const two = groups.some((x) => x.counters.length > 1);
  const order = `ORDER BY created_at, id COLLATE "C" ROWS UNBOUNDED PRECEDING`;
  const sql = `DECLARE replay_budget NO SCROLL CURSOR FOR
    WITH g AS (
      SELECT * FROM unnest(${columns.join(", ")})
        AS g(idx, key_hash, day, model, provider, status, refusal_reason, here, byok, paid,
             data_region, endpoint_policy, governed_as, c1, c2, price, charged)
    ), r AS (
      SELECT t.id, t.created_at, t.cost_usd, t.characters, g.idx, g.c1, g.c2,
             CASE WHEN g.charged
                  THEN ceil(CASE WHEN g.price IS NULL THEN t.cost_usd
                                 ELSE t.characters::float8 * g.price / 1000000 END
                            * 1000000 - 1e-9)
                  ELSE 0 END AS amt
        FROM (SELECT id, created_at, cost_usd, characters, key_hash,
                     floor(date_part('epoch', created_at) / 86400)::int4 AS day,
                     ${groupColumns(idParam, labels.length)}
                FROM generations WHERE ${WINDOW_WHERE}) AS t
        JOIN g USING (key_hash, day, model, provider, status, refusal_reason, here, byok, paid,
                      data_region, endpoint_policy, governed_as)
    ), s AS (
      SELECT *, sum(amt) OVER (PARTITION BY c1 ${order}) AS run1,
             ${two ? `sum(amt) OVER (PARTITION BY c2 ${order})` : "NULL::float8"} AS run2
        FROM r
    ), c AS (
      SELECT *, run1 < ${limit} AND (c2 IS NULL OR run2 < ${limit}) AS sure FROM s
    ), k AS MATERIALIZED (
      SELECT id, created_at, cost_usd, characters, idx, amt,
             CASE WHEN sure THEN 0
                  WHEN coalesce(sum(amt) FILTER (WHERE sure) OVER (PARTITION BY c1), 0) + amt > ${limit}
                    ${two ? `OR (c2 IS NOT NULL AND coalesce(sum(amt) FILTER (WHERE sure) OVER (PARTITION BY c2), 0) + amt > ${limit})` : ""}
                  THEN 1 ELSE 2 END AS kind
        FROM c
    )
    SELECT kind, idx, count(*)::int8 AS n, sum(cost_usd)::float8 AS cost,
           sum(characters)::int8 AS chars, sum(amt)::float8 AS micros,
           min(id COLLATE "C") AS id, 0::float8 AS at_ms
      FROM k WHERE kind < 2 GROUP BY kind, idx
    UNION ALL
    SELECT kind, idx, 1, cost_usd, characters, amt, id COLLATE "C",
           date_part('epoch', created_at) * 1000
      FROM k WHERE kind = 2
    ORDER BY 1, 8, 7, 2`;
  await db.transaction(async (tx) => {
    // The window sums sort the records of every overflowing counter: in memory, not on disk.
    await tx.query("SET LOCAL work_mem = '128MB'");
    // The planner cannot estimate the unnested groups and would sort every record on all twelve
    // columns to merge-join them: hashing the groups reads the records once.
    await tx.query("SET LOCAL enable_mergejoin = off");
    await tx.query("SET LOCAL enable_nestloop = off");
    // Those estimates also make it compile the query, which costs more than it saves here.
    await tx.query("SET LOCAL jit = off");
    await tx.query(sql, params);
    for (;;) {
      const rows = await tx.query<{
        kind: number;
        idx: number;
        n: number;
        cost: number;
        chars: number;
        micros: number;
        id: string;
        at_ms: number;
      }>(`FETCH FORWARD ${pageSize} FROM replay_budget`);
      for (const r of rows) {
        visit({
          kind: KINDS[r.kind] ?? "ordered",
          group: r.idx,
          count: Number(r.n),
          id: r.id,
          atMs: r.at_ms,
          costUsd: r.cost,
          characters: Number(r.chars),
          micros: r.micros,
        });
      }
      if (rows.length < pageSize) break;
    }
    await tx.query("CLOSE replay_budget");
  });
}
