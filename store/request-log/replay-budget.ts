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
  /** For a sample: `id` and, of several, another (the first and last of them by id). */
  ids: string[];
  /** The record's time (for "ordered"; 0 for the others). */
  atMs: number;
  costUsd: number;
  characters: number;
  /** What the budget charges them, in micro-dollars. */
  micros: number;
}

const KINDS = ["admitted", "refused", "ordered"] as const;

/** Runs of days replayed side by side, each on a connection of its own (two cores and more). */
const SHARDS = 3;

type Column = [name: string, type: string, values: unknown[]];

/** A table of one array per column, unnested (the parameters from `push`). */
function arrayTable(
  push: (values: unknown, type: string) => string,
  name: string,
  columns: Column[],
): string {
  const arrays = columns.map(([, type, values]) => push(values, `${type}[]`));
  return `unnest(${arrays.join(", ")}) AS ${name}(${columns.map(([c]) => c).join(", ")})`;
}

/**
 * The query of the groups' records, each with its group, counters and amount, of the UTC days
 * `from` to `to` (inclusive; the groups' every day when not given).
 */
function recordsOf(
  groups: readonly BudgetGroup[],
  push: (values: unknown, type: string) => string,
  idParam: number,
  labelCount: number,
): (days?: [from: number, to: number]) => string {
  // Counters travel as numbers: the window sums sort every record by its counter.
  const counterIds = new Map<string, number>();
  for (const x of groups)
    for (const c of x.counters) if (!counterIds.has(c)) counterIds.set(c, counterIds.size);
  // A counter no group pairs with another is decided whole by the aggregate; a pair's requests
  // are refused as soon as either counter is spent, so their order spans two counters.
  const paired = new Set(groups.flatMap((x) => (x.counters.length > 1 ? x.counters : [])));
  // A group is a key, a day and a class (what the rules read): the records find theirs by one
  // number, made of each class column's place among the values the groups have (a record with
  // any other value has none) and of the key's (a small table the planner hashes). Joined on
  // the twelve columns, or on the classes as a table, the planner hashes the records instead.
  const keyIds = new Map<string, number>();
  let firstDay = Number.POSITIVE_INFINITY;
  let lastDay = Number.NEGATIVE_INFINITY;
  for (const { group: x } of groups) {
    if (!keyIds.has(x.keyHash)) keyIds.set(x.keyHash, keyIds.size);
    firstDay = Math.min(firstDay, x.day);
    lastDay = Math.max(lastDay, x.day);
  }
  const classColumns: [column: string, type: string, of: (x: ReplayGroup) => unknown][] = [
    ["model", "text", (x) => x.model],
    ["provider", "text", (x) => x.provider],
    ["status", "text", (x) => x.status],
    ["refusal_reason", "text", (x) => x.refusalReason],
    ["here", "bool", (x) => x.decidedHere],
    ["byok", "bool", (x) => x.byok],
    ["paid", "bool", (x) => x.paid],
    ["data_region", "int4", (x) => x.dataRegion],
    ["endpoint_policy", "int4", (x) => x.endpointPolicy ?? -1],
    ["governed_as", "int4", (x) => x.governedAs],
  ];
  let radix = 1n;
  // A column every group has one value of is a filter; the others count in the number.
  const filters: string[] = [];
  const places: { sql: string; of: (x: ReplayGroup) => bigint }[] = [];
  for (const [column, type, of] of classColumns) {
    const values = [...new Set(groups.map((x) => of(x.group)))];
    if (values.length === 1) {
      filters.push(`t.${column} = ${push(values[0], type)}`);
      continue;
    }
    const at = new Map(values.map((v, i) => [v, BigInt(i)]));
    const weight = radix;
    radix *= BigInt(values.length);
    places.push({
      sql: `(array_position(${push(values, `${type}[]`)}, t.${column}) - 1)::int8 * ${weight}`,
      of: (x: ReplayGroup) => (at.get(of(x)) ?? 0n) * weight,
    });
  }
  const keys = BigInt(keyIds.size);
  const days = BigInt(lastDay - firstDay + 1);
  // So many keys, days and values that the number would overflow: every column joined instead.
  const coded = radix * keys * days < 2n ** 63n;
  const codeOf = (x: ReplayGroup) =>
    (places.reduce((sum, p) => sum + p.of(x), 0n) * keys + BigInt(keyIds.get(x.keyHash) ?? 0)) *
      days +
    BigInt(x.day - firstDay);
  const keyTable = arrayTable(push, "ky", [
    ["key_hash", "text", [...keyIds.keys()]],
    ["kidx", "int4", [...keyIds.values()]],
  ]);
  const groupTable = arrayTable(push, "g", [
    ["code", "int8", groups.map((x) => (coded ? codeOf(x.group).toString() : null))],
    ...(coded
      ? []
      : [
          ["key_hash", "text", groups.map((x) => x.group.keyHash)] as Column,
          ["day", "int4", groups.map((x) => x.group.day - firstDay)] as Column,
          ...classColumns.map(([c, type, of]): Column => [c, type, groups.map((x) => of(x.group))]),
        ]),
    ["idx", "int4", groups.map((_, i) => i)],
    ["c1", "int4", groups.map((x) => counterIds.get(x.counters[0]))],
    [
      "c2",
      "int4",
      groups.map((x) => (x.counters[1] === undefined ? null : counterIds.get(x.counters[1]))),
    ],
    ["price", "float8", groups.map((x) => x.pricePerMillion)],
    ["charged", "bool", groups.map((x) => x.charged)],
    ["solo", "bool", groups.map((x) => x.counters.length === 1 && !paired.has(x.counters[0]))],
  ]);
  // Only the days the groups span, which also keeps a record's number from reaching the next
  // key's: the partitions outside them are not read.
  return (
    [fromDay, toDay] = [firstDay, lastDay],
  ) => `SELECT t.id, t.created_at, t.cost_usd, t.characters, g.idx, g.c1, g.c2, g.solo,
             CASE WHEN g.charged
                  THEN ceil(CASE WHEN g.price IS NULL THEN t.cost_usd
                                 ELSE t.characters::float8 * g.price / 1000000 END
                            * 1000000 - 1e-9)
                  ELSE 0 END AS amt
        FROM (SELECT id, created_at, cost_usd, characters, key_hash,
                     floor(date_part('epoch', created_at) / 86400)::int4 - ${firstDay} AS day,
                     ${groupColumns(idParam, labelCount)}
                FROM generations
               WHERE ${WINDOW_WHERE}
                 AND created_at >= to_timestamp(${push(fromDay * 86_400, "float8")})
                 AND created_at < to_timestamp(${push((toDay + 1) * 86_400, "float8")})) AS t
        ${
          coded
            ? `JOIN ${keyTable} USING (key_hash)
               JOIN ${groupTable}
                 ON g.code = ((${["0", ...places.map((p) => p.sql)].join(" + ")}) * ${keys} + kidx)
                             * ${days} + t.day
              ${filters.length > 0 ? `WHERE ${filters.join(" AND ")}` : ""}`
            : `JOIN ${groupTable} USING (key_hash, day, ${classColumns.map(([c]) => c).join(", ")})`
        }`;
}

/**
 * The groups' days cut into up to `n` runs of about as many records, never inside a counter's
 * window (a counter's days all fall in one run): its requests are replayed in one pass.
 */
function shardDays(groups: readonly BudgetGroup[], n: number): [from: number, to: number][] {
  const spans = new Map<string, [from: number, to: number, records: number]>();
  for (const { group: x, counters } of groups) {
    for (const c of counters) {
      const s = spans.get(c);
      if (s) {
        s[0] = Math.min(s[0], x.day);
        s[1] = Math.max(s[1], x.day);
      } else spans.set(c, [x.day, x.day, 0]);
    }
    const first = spans.get(counters[0]);
    if (first) first[2] += x.count;
  }
  // Overlapping windows merge (a weekly and a daily one, or windows of keys that differ).
  const merged: [number, number, number][] = [];
  for (const [from, to, records] of [...spans.values()].sort((a, b) => a[0] - b[0])) {
    const last = merged.at(-1);
    if (last && from <= last[1]) {
      last[1] = Math.max(last[1], to);
      last[2] += records;
    } else merged.push([from, to, records]);
  }
  const total = merged.reduce((sum, m) => sum + m[2], 0);
  const runs: [number, number][] = [];
  let taken = 0;
  for (const [from, to, records] of merged) {
    const last = runs.at(-1);
    // A new run once the ones so far hold their share of the records.
    if (last && taken < (total * runs.length) / n) last[1] = to;
    else runs.push([from, to]);
    taken += records;
  }
  return runs;
}

/**
 * Replays the budget in the database for the given groups' records, oldest first per counter
 * (a window of its records ordered by time): a counter that is the only one its requests are
 * checked against (a key's, or a member's, alone) is replayed whole by replay_budget_admit
 * (migration 0016), which carries the admitted spend from one request to the next, and its
 * records come back added up per group, admitted and refused.
 *
 * Requests checked against two counters (a member's beside its key's) are refused as soon as
 * either is spent, which ties the two counters' orders together. Each counter's spend runs
 * (a window sum) as if every request were admitted: a request whose counters all stay below the
 * limit is admitted whatever came before it (refusals only lower the spend), and one that no
 * longer fits beside what those sure admissions already spent on one of its counters is refused
 * whatever came before it; only the rest, after a counter's first crossing, is handed over record
 * by record, with the few columns the caller needs, through a cursor a page at a time. The
 * caller starts each counter at the micros of its admitted parts, then replays the ordered
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
  /** The query of the records of `days` (all when not given), with its parameters. */
  const query = (make: (records: string, limit: string) => string, days?: [number, number]) => {
    const params: unknown[] = [workspaceId, labels, fromMs, toMs, ...labels, guardrailId];
    const idParam = params.length;
    const push = (values: unknown, type: string) => {
      params.push(values);
      return `$${params.length}::${type}`;
    };
    const records = recordsOf(groups, push, idParam, labels.length)(days);
    return { sql: make(records, push(limitMicros, "float8")), params };
  };
  const hand = (rows: PartRow[]) => {
    for (const r of rows) {
      visit({
        kind: KINDS[r.kind] ?? "ordered",
        group: r.idx,
        count: Number(r.n),
        id: r.id,
        ids: r.last_id === r.id ? [r.id] : [r.id, r.last_id],
        atMs: r.at_ms,
        costUsd: r.cost,
        characters: Number(r.chars),
        micros: r.micros,
      });
    }
  };
  if (groups.some((x) => x.counters.length > 1)) {
    const { sql, params } = query(pairedParts);
    await db.transaction(async (tx) => {
      await planFor(tx);
      // Every row is fetched: the plan for all of them, not for the first few.
      await tx.query("SET LOCAL cursor_tuple_fraction = 1");
      await tx.query(`DECLARE replay_budget NO SCROLL CURSOR FOR ${sql}`, params);
      for (;;) {
        const rows = await tx.query<PartRow>(`FETCH FORWARD ${pageSize} FROM replay_budget`);
        hand(rows);
        if (rows.length < pageSize) break;
      }
      await tx.query("CLOSE replay_budget");
    });
    return;
  }
  // Every counter alone: the days are cut in runs, each replayed by a connection of its own at
  // the same time (PostgreSQL runs a window in one process, and a query's parallel workers would
  // only read the records for it), none inside a counter's window.
  const runs = await Promise.all(
    shardDays(groups, SHARDS).map((days) => {
      const { sql, params } = query(loneParts, days);
      return db.transaction(async (tx) => {
        await planFor(tx);
        await tx.query("SET LOCAL max_parallel_workers_per_gather = 0");
        return tx.query<PartRow>(sql, params);
      });
    }),
  );
  for (const rows of runs) hand(rows);
}

/** A row of the replay's answer: a part (BudgetPart) as the database gives it. */
interface PartRow {
  kind: number;
  idx: number;
  n: number;
  cost: number;
  chars: number;
  micros: number;
  id: string;
  last_id: string;
  at_ms: number;
}

const ORDER = `ORDER BY created_at, id COLLATE "C" ROWS UNBOUNDED PRECEDING`;

/**
 * Every counter alone: one ordered pass decides every request, and each group's admitted and
 * refused requests are added up (window sums before it, which would leave the aggregate only
 * the requests after a counter's first crossing, cost more than they save).
 */
function loneParts(records: string, limit: string): string {
  return `
    SELECT kind, idx, count(*)::int8 AS n, sum(cost_usd)::float8 AS cost,
           sum(characters)::int8 AS chars, sum(amt)::float8 AS micros,
           min(id COLLATE "C") AS id, max(id COLLATE "C") AS last_id, 0::float8 AS at_ms
      FROM (SELECT id, cost_usd, characters, idx, amt,
                   CASE WHEN replay_budget_admit(amt, ${limit}) OVER (PARTITION BY c1 ${ORDER}) >= 0
                        THEN 0 ELSE 1 END AS kind
              FROM (${records}) AS r) AS k
     GROUP BY kind, idx
     ORDER BY 1, 7, 2`;
}

/**
 * Requests checked against two counters: window sums sort out the sure ones, and the rest of
 * them come one by one, oldest first, after every added-up part.
 */
function pairedParts(records: string, limit: string): string {
  // Each window over a whole counter keeps the order of the running sums', so one sort per
  // counter serves them all.
  const whole = `ORDER BY created_at, id COLLATE "C" ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING`;
  return `
    WITH r AS (${records}), s AS (
      SELECT *, sum(amt) OVER (PARTITION BY c1 ${ORDER}) AS run1,
             sum(amt) OVER (PARTITION BY c2 ${ORDER}) AS run2
        FROM r
    ), d AS (
      SELECT *, run1 < ${limit} AND (c2 IS NULL OR run2 < ${limit}) AS sure FROM s
    ), e AS (
      SELECT *,
             ${limit} - coalesce(sum(amt) FILTER (WHERE sure) OVER (PARTITION BY c1 ${whole}), 0)
               AS room1,
             ${limit} - coalesce(sum(amt) FILTER (WHERE sure) OVER (PARTITION BY c2 ${whole}), 0)
               AS room2
        FROM d
    ), k AS (
      SELECT id, created_at, cost_usd, characters, idx, amt,
             CASE WHEN sure OR amt = 0 THEN 0
                  WHEN amt > room1 OR (c2 IS NOT NULL AND amt > room2) THEN 1
                  WHEN NOT solo THEN 2
                  -- A lone counter's undecided requests start from its sure admissions' spend.
                  WHEN replay_budget_admit(amt, room1)
                         FILTER (WHERE NOT sure AND amt <= room1 AND solo)
                         OVER (PARTITION BY c1 ${ORDER}) >= 0 THEN 0
                  ELSE 1 END AS kind
        FROM e
    )
    SELECT kind, idx, count(*)::int8 AS n, sum(cost_usd)::float8 AS cost,
           sum(characters)::int8 AS chars, sum(amt)::float8 AS micros,
           min(id COLLATE "C") AS id, max(id COLLATE "C") AS last_id,
           CASE WHEN kind = 2 THEN min(date_part('epoch', created_at) * 1000) ELSE 0 END AS at_ms
      FROM k GROUP BY kind, idx, CASE WHEN kind = 2 THEN id END
     ORDER BY 1, 9, 7, 2`;
}

/** The planner settings a replay's query needs (for the transaction). */
async function planFor(tx: SqlDatabase): Promise<void> {
  // The window sorts the records of every overflowing counter: in memory, not on disk.
  await tx.query("SET LOCAL work_mem = '128MB'");
  // The planner cannot estimate how many records the groups hold (it expects a few): it would
  // merge-join them after sorting, or loop over them, where hashing reads them once.
  await tx.query("SET LOCAL enable_mergejoin = off");
  await tx.query("SET LOCAL enable_nestloop = off");
  // Those estimates also make it compile the query, which costs more than it saves here.
  await tx.query("SET LOCAL jit = off");
  // The records come out of the window sorted by counter and time, and the planner, which
  // expects a few, would sort them again to add them up per group: hashing them is cheaper.
  await tx.query("SET LOCAL enable_sort = off");
}
