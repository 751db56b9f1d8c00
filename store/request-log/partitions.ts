import type { SqlDatabase } from "./database.js";

const DAY_MS = 86_400_000;

/** Table names come from code, never from a request; checked anyway since they are spliced into DDL. */
function checkIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,40}$/.test(name)) throw new Error(`bad table name ${name}`);
  return name;
}

/** Midnight UTC of the day holding `at`: partitions are UTC days everywhere. */
export function utcDay(at: Date | number): number {
  const ms = typeof at === "number" ? at : at.getTime();
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** generations_p20261126 for the UTC day of `day`. */
export function partitionName(table: string, day: number): string {
  return `${checkIdentifier(table)}_p${new Date(day).toISOString().slice(0, 10).replaceAll("-", "")}`;
}

/** Advisory-lock key per table: replicas creating or dropping the same day wait for each other. */
function lockKey(table: string): number {
  let h = 7_342_100;
  for (const ch of table) h = (h * 31 + ch.charCodeAt(0)) | 0;
  return h;
}

/**
 * Creates the daily partitions of `table` (RANGE on created_at) for these days when missing.
 * Under a transaction-level advisory lock, because CREATE TABLE IF NOT EXISTS is not safe
 * against another session creating the same table at the same moment.
 */
export async function ensureDayPartitions(
  db: SqlDatabase,
  table: string,
  days: Iterable<number>,
): Promise<void> {
  const wanted = [...new Set([...days].map(utcDay))].sort((a, b) => a - b);
  if (wanted.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey(table)]);
    for (const day of wanted) {
      const from = new Date(day).toISOString();
      const to = new Date(day + DAY_MS).toISOString();
      await tx.exec(
        `CREATE TABLE IF NOT EXISTS ${partitionName(table, day)} PARTITION OF ${checkIdentifier(table)} FOR VALUES FROM ('${from}') TO ('${to}')`,
      );
    }
  });
}

/** The days (UTC midnights) that have a partition of `table`, oldest first. */
export async function listDayPartitions(db: SqlDatabase, table: string): Promise<number[]> {
  const rows = await db.query<{ name: string }>(
    `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = to_regclass($1)`,
    [checkIdentifier(table)],
  );
  const days: number[] = [];
  for (const { name } of rows) {
    const m = /_p(\d{4})(\d{2})(\d{2})$/.exec(name);
    if (m) days.push(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  }
  return days.sort((a, b) => a - b);
}

/**
 * Retention: drops every partition whose whole day lies before `cutoff` (a partition still
 * holding a record at or after the cutoff stays). Dropping a partition frees its space at
 * once, without the DELETE and vacuum a row-by-row expiry would cost. Returns the days dropped.
 */
export async function dropDayPartitionsBefore(
  db: SqlDatabase,
  table: string,
  cutoff: Date,
): Promise<number[]> {
  const expired = (await listDayPartitions(db, table)).filter(
    (day) => day + DAY_MS <= cutoff.getTime(),
  );
  if (expired.length === 0) return [];
  await db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey(table)]);
    for (const day of expired) await tx.exec(`DROP TABLE IF EXISTS ${partitionName(table, day)}`);
  });
  return expired;
}

/**
 * Remembers the days this process knows to have a partition, so a writer asks the database
 * once per day and table, not once per batch.
 */
export class DayPartitions {
  private readonly known = new Set<number>();
  constructor(
    private readonly db: SqlDatabase,
    readonly table: string,
  ) {}

  /** Makes sure every day of `times` has its partition before rows of those days are inserted. */
  async ensure(times: Iterable<Date | number>): Promise<void> {
    const missing = new Set<number>();
    for (const t of times) {
      const day = utcDay(t);
      if (!this.known.has(day)) missing.add(day);
    }
    if (missing.size === 0) return;
    await ensureDayPartitions(this.db, this.table, missing);
    for (const day of missing) this.known.add(day);
  }

  /** After a retention drop: those days may come back (a late record), so ask again. */
  forget(days: Iterable<number>): void {
    for (const day of days) this.known.delete(day);
  }
}
