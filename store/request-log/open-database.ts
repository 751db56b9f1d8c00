import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join, resolve } from "node:path";
import { type RailgateConfig, redactUrl } from "../../platform/config/config.js";
import { componentLogger } from "../../platform/observability/logger.js";
import type { SqlDatabase } from "./database.js";
import { embeddedDatabase } from "./embedded-database.js";
import { migrate } from "./migrate.js";
import { postgresDatabase } from "./postgres-database.js";

/** Exported so a test can raise its level and read the announcement (RAILGATE_LOG_LEVEL=fatal in tests). */
export const databaseLog = componentLogger("database");
const log = databaseLog;

export type DatabaseConfig = Pick<
  RailgateConfig,
  "databaseUrl" | "databasePoolMax" | "dataDir" | "embeddedDatabaseInMemory"
>;

/** Where the embedded database keeps its files under the data folder. */
export function embeddedDataDir(config: Pick<RailgateConfig, "dataDir">): string {
  return resolve(join(config.dataDir, "pglite"));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists, it is just not ours to signal.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * PGlite has no lock of its own, and two processes (or two opens in one) on one folder corrupt
 * it: a lock file with the owner's pid refuses the second, naming the owner. A lock left by a
 * process that is gone is taken over. Returns the release function.
 */
function lockDataDir(dir: string): () => void {
  const file = join(dir, "railgate.lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = Number(readFileSync(file, "utf8").trim());
      if (Number.isSafeInteger(owner) && owner > 0 && alive(owner)) {
        throw new Error(
          `the embedded database in ${dir} is in use by process ${owner}: PGlite serves one process; stop it, or set DATABASE_URL so that several processes share a PostgreSQL server`,
        );
      }
      rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock the embedded database in ${dir}`);
}

/**
 * The database of the request log, audit log and webhooks, migrated to this version's schema:
 * - DATABASE_URL set: that PostgreSQL server (every replica shares it);
 * - otherwise the embedded PGlite, file-backed in RAILGATE_DATA_DIR/pglite (one process only:
 *   PGlite is a single connection, so replicas need a server); in memory for tests.
 * The choice is announced in the log (which store, where, why), like the Redis/embedded choice.
 */
export async function openDatabase(config: DatabaseConfig): Promise<SqlDatabase> {
  let db: SqlDatabase;
  if (config.databaseUrl) {
    log.info(
      { store: "postgres", url: redactUrl(config.databaseUrl), why: "DATABASE_URL is set" },
      `request log: PostgreSQL at ${redactUrl(config.databaseUrl)}`,
    );
    db = postgresDatabase({ url: config.databaseUrl, maxConnections: config.databasePoolMax });
  } else if (config.embeddedDatabaseInMemory) {
    log.info(
      { store: "embedded", where: "memory", why: "in-memory database requested (tests)" },
      "request log: embedded PGlite in memory",
    );
    db = await embeddedDatabase(undefined);
  } else {
    const dir = embeddedDataDir(config);
    mkdirSync(dir, { recursive: true });
    log.warn(
      {
        store: "embedded",
        where: dir,
        why: "DATABASE_URL is not set",
      },
      `request log: embedded PGlite in ${dir} (DATABASE_URL is not set; one process only, set DATABASE_URL to share a PostgreSQL server between replicas)`,
    );
    const unlock = lockDataDir(dir);
    let opened: SqlDatabase;
    try {
      opened = await embeddedDatabase(dir);
    } catch (err) {
      unlock();
      throw err;
    }
    db = {
      kind: opened.kind,
      query: (sql, params) => opened.query(sql, params),
      exec: (sql) => opened.exec(sql),
      transaction: (fn) => opened.transaction(fn),
      close: async () => {
        await opened.close();
        unlock();
      },
    };
  }
  try {
    await migrate(db);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  return db;
}
