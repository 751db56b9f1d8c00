import { componentLogger } from "../../platform/observability/logger.js";
import type { SqlDatabase } from "./database.js";
import { MIGRATIONS } from "./migrations/index.js";
import type { Migration } from "./migrations/migration.js";

const log = componentLogger("request-log");

/**
 * Any constant will do, as long as nothing else in the database uses it: the transaction-level
 * advisory lock that makes replicas starting at once apply migrations one after another.
 */
const MIGRATION_LOCK = 7_342_001;

/**
 * Applies the migrations this database lacks, in version order, in ONE transaction under an
 * advisory lock: a replica that starts while another migrates waits, then finds everything
 * applied. A failing migration rolls every step of this run back, so a database is never left
 * half-migrated. Returns the versions applied now.
 */
export async function migrate(
  db: SqlDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  checkOrder(migrations);
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    // Under the lock: CREATE TABLE IF NOT EXISTS itself races between sessions.
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY,
      name text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const rows = await tx.query<{ version: number }>("SELECT version FROM schema_migrations");
    const applied = new Set(rows.map((r) => r.version));
    const known = new Set(migrations.map((m) => m.version));
    const unknown = [...applied].filter((v) => !known.has(v));
    if (unknown.length > 0) {
      // A newer release migrated this database: running old code against it would be guesswork.
      throw new Error(
        `the database has migrations this version does not know (${unknown.join(", ")}): run a newer Railgate`,
      );
    }
    const now: number[] = [];
    for (const m of migrations) {
      if (applied.has(m.version)) continue;
      await tx.exec(m.sql);
      await tx.query("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", [
        m.version,
        m.name,
      ]);
      now.push(m.version);
    }
    if (now.length > 0) log.info({ versions: now }, "database migrated");
    return now;
  });
}

/** Versions strictly increase (gaps allowed: a reserved number may not be merged yet). */
function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    const before = migrations[i - 1];
    if (
      !Number.isSafeInteger(m.version) ||
      m.version < 1 ||
      (before && m.version <= before.version)
    ) {
      throw new Error(`migration ${m.name} (version ${m.version}) is out of order`);
    }
  });
}
