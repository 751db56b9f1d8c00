import { execFileSync } from "node:child_process";
import { chownSync, existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { embeddedDatabase } from "../../store/request-log/embedded-database.js";
import { migrate } from "../../store/request-log/migrate.js";
import { postgresDatabase } from "../../store/request-log/postgres-database.js";
import { freePort } from "./free-port.js";
import { LANE_DATABASES } from "./lane.js";
import { makeTempDir, spawnChild } from "./processes.js";

export type DatabaseKind = "embedded" | "postgres";

export interface TestDatabase {
  kind: DatabaseKind;
  /** Migrated unless created with `{ migrate: false }`. */
  db: SqlDatabase;
  /** postgres: the URL of this throwaway database (for a system in another process). */
  url?: string;
  /** Drops what this test database holds (its schema or database) and closes it. */
  dispose(): Promise<void>;
}

/**
 * The PostgreSQL server the tests may create databases on: RAILGATE_TEST_POSTGRES_URL (an
 * admin URL), else 127.0.0.1:5432 as user postgres with trust authentication. When neither
 * answers, the kit starts a throwaway cluster of its own (Debian's postgresql package).
 * Tests only ever CREATE and DROP databases named railgate_test_<random>: never another.
 */
const DEFAULT_ADMIN_URL = "postgres://postgres@127.0.0.1:5432/postgres";

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("SELECT 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The newest /usr/lib/postgresql/<version>/bin holding initdb and postgres. */
function postgresBinDir(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] === undefined) {
    throw new Error(
      "no PostgreSQL server answers at 127.0.0.1:5432 and initdb is missing: install Debian's postgresql package (.ci/run does)",
    );
  }
  return join(root, versions[0], "bin");
}

/** initdb refuses to run as root: run the cluster as the package's postgres user then. */
function clusterUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"]).toString().trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** A private cluster in a temp dir on a free port, trust auth, no fsync (throwaway data). */
async function startCluster(): Promise<string> {
  const bin = postgresBinDir();
  const dir = makeTempDir("railgate-pg-");
  const user = clusterUser();
  if (user) chownSync(dir, user.uid, user.gid);
  const data = join(dir, "data");
  execFileSync(
    join(bin, "initdb"),
    ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"],
    { stdio: "ignore", uid: user?.uid, gid: user?.gid },
  );
  const port = await freePort();
  // Tracked by processes.ts: killed with the test run, however it ends.
  const child = spawnChild(
    join(bin, "postgres"),
    [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "synchronous_commit=off",
      "-c",
      "full_page_writes=off",
    ],
    process.env,
    { uid: user?.uid, gid: user?.gid },
  );
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  for (let i = 0; !(await answers(url)); i++) {
    if (i > 200 || child.process.exitCode !== null) {
      throw new Error(`the throwaway PostgreSQL did not start:\n${child.output().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return url;
}

let adminUrl: Promise<string> | undefined;

/** The admin URL of a server that answers (found or started once per test run). */
export function testPostgresServer(): Promise<string> {
  adminUrl ??= (async () => {
    const url = process.env.RAILGATE_TEST_POSTGRES_URL || DEFAULT_ADMIN_URL;
    if (await answers(url)) return url;
    return startCluster();
  })();
  return adminUrl;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await testPostgresServer() });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function randomName(prefix: string): string {
  return `${prefix}${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
}

/** A fresh database railgate_test_<random> on the test server; dispose() drops it. */
/** CREATE DATABASE railgate_test_<random> on the test server: its name and its URL. */
async function createPostgresDatabase(): Promise<{ name: string; url: string }> {
  const name = randomName("railgate_test_");
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(await testPostgresServer());
  url.pathname = `/${name}`;
  return { name, url: url.toString() };
}

function dropPostgresDatabase(name: string): Promise<unknown> {
  return admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

async function throwawayPostgres(): Promise<TestDatabase & { url: string }> {
  const { name, url } = await createPostgresDatabase();
  const db = postgresDatabase({ url, maxConnections: 5 });
  return {
    kind: "postgres",
    db,
    url,
    async dispose() {
      await db.close();
      await dropPostgresDatabase(name);
    },
  };
}

/**
 * In-memory PGlites shared per test run: one takes seconds to start (WebAssembly PostgreSQL),
 * far more than a suite's queries. `suitesPglite` holds the throwaway databases, each a fresh
 * schema (search_path points there; PGlite is one connection and suites run one at a time),
 * dropped by dispose(). `systemsPglite` is the test systems' request log (sharedTestDatabase):
 * apart, so a system's writer, still flushing while the next suite starts, never follows
 * search_path into another suite's schema.
 */
let suitesPglite: Promise<SqlDatabase> | undefined;
let systemsPglite: Promise<SqlDatabase> | undefined;

async function throwawayEmbedded(): Promise<TestDatabase> {
  suitesPglite ??= embeddedDatabase(undefined);
  const shared = await suitesPglite;
  const schema = randomName("railgate_test_");
  await shared.exec(`CREATE SCHEMA ${schema}; SET search_path TO ${schema}`);
  let disposed = false;
  // The shared engine outlives every suite: closing "this" database drops only its schema.
  const db: SqlDatabase = {
    kind: "embedded",
    query: (sql, params) => shared.query(sql, params),
    exec: (sql) => shared.exec(sql),
    transaction: (fn) => shared.transaction(fn),
    close: async () => {},
  };
  return {
    kind: "embedded",
    db,
    async dispose() {
      if (disposed) return;
      disposed = true;
      await shared.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE; SET search_path TO public`);
    },
  };
}

let sharedLog: Promise<SqlDatabase> | undefined;

/**
 * The request-log database of every test system that is not handed one of its own: the shared
 * in-memory PGlite's public schema, migrated once per run. Systems' records are told apart by
 * their workspaces and keys (fresh per suite); closing a system leaves it open.
 */
export function sharedTestDatabase(): Promise<SqlDatabase> {
  sharedLog ??= (async () => {
    systemsPglite ??= embeddedDatabase(undefined);
    const shared = await systemsPglite;
    await migrate(shared);
    const db: SqlDatabase = {
      kind: "embedded",
      query: (sql, params) => shared.query(sql, params),
      exec: (sql) => shared.exec(sql),
      transaction: (fn) => shared.transaction(fn),
      close: async () => {},
    };
    return db;
  })();
  return sharedLog;
}

/** A throwaway database of this kind, migrated to the current schema unless told otherwise. */
export async function createTestDatabase(
  kind: DatabaseKind,
  options: { migrate?: boolean } = {},
): Promise<TestDatabase> {
  const t = kind === "postgres" ? await throwawayPostgres() : await throwawayEmbedded();
  if (options.migrate !== false) await migrate(t.db);
  return t;
}

/**
 * Declares `suite` twice under `title` (in the fast lane only the second, see lane.ts): on a real
 * PostgreSQL (a throwaway database on the test server) and on the embedded PGlite, so both answer the same SQL the same way. A fresh,
 * migrated database per kind for the whole suite; `getDb()` is valid between before and after.
 */
export function onBothDatabases(
  title: string,
  suite: (getDb: () => SqlDatabase, getTest: () => TestDatabase) => void,
  options: { migrate?: boolean } = {},
): void {
  describe(title, () => {
    for (const kind of LANE_DATABASES) {
      describe(kind, () => {
        let t: TestDatabase | undefined;
        before(async function () {
          // PGlite's first start (once per run) and CREATE DATABASE take seconds on a busy machine.
          this.timeout(120_000);
          t = await createTestDatabase(kind, options);
        });
        after(async () => {
          await t?.dispose();
        });
        const current = () => {
          if (!t) throw new Error("the test database is not ready (used outside a test?)");
          return t;
        };
        suite(() => current().db, current);
      });
    }
  });
}

/** Databases made for child systems in this test process, dropped when the run ends. */
const childDatabases: string[] = [];
let childDatabase: Promise<string> | undefined;

/**
 * The DATABASE_URL of child systems (startSystemProcess, startSplitSystem): one throwaway
 * database on the test server per test process, migrated by the first child that starts (the
 * migrations take an advisory lock). Not the embedded PGlite, which each child would open on
 * its own: seconds of WebAssembly start-up and hundreds of MB per process, which on a loaded
 * machine pushed children past their start-up deadline. Suites that want a child on PGlite say
 * so with DATABASE_URL "" (see childDatabaseEnv).
 */
export function childSystemDatabaseUrl(): Promise<string> {
  childDatabase ??= (async () => {
    const { name, url } = await createPostgresDatabase();
    childDatabases.push(name);
    return url;
  })();
  return childDatabase;
}

/** `env` with DATABASE_URL set to the run's child database unless the suite chose one ("" = PGlite). */
export async function childDatabaseEnv(
  env: Record<string, string>,
): Promise<Record<string, string>> {
  if ("DATABASE_URL" in env) return env;
  return { ...env, DATABASE_URL: await childSystemDatabaseUrl() };
}

// A root-level hook (this module loads with the spec files): the run's child databases go
// when the run ends, after every child system has stopped.
if (typeof after === "function") {
  after(async () => {
    for (const name of childDatabases.splice(0)) {
      await dropPostgresDatabase(name).catch(() => {});
    }
  });
}
