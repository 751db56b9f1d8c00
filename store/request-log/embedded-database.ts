import { existsSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { readTemplate, templatePath } from "./data-dir-template.js";
import type { SqlDatabase } from "./database.js";
import { pgliteOptions } from "./pglite-options.js";

type Target = PGlite | Transaction;

/**
 * PGlite runs one PostgreSQL backend in this process: a single connection. Its own mutex
 * already makes a query outside a transaction wait until an open transaction ends, so
 * transactions are serialized and never interleave with other statements.
 */
class EmbeddedQueries implements SqlDatabase {
  readonly kind = "embedded" as const;
  constructor(
    private readonly target: Target,
    private readonly owner: PGlite | undefined,
  ) {}

  async query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]> {
    const result = await this.target.query<R>(sql, params);
    return result.rows;
  }

  async exec(sql: string): Promise<void> {
    await this.target.exec(sql);
  }

  async transaction<T>(fn: (tx: SqlDatabase) => Promise<T>): Promise<T> {
    if (!this.owner) return fn(this);
    return this.owner.transaction((tx) => fn(new EmbeddedQueries(tx, undefined)));
  }

  async close(): Promise<void> {
    if (this.owner && !this.owner.closed) await this.owner.close();
  }
}

/**
 * PGlite over `dataDir` (created when missing; survives restarts), or in memory when
 * `dataDir` is undefined (tests: nothing on disk, gone with the process). A new database is
 * loaded from the build's template (data-dir-template.ts) when there is one for this PGlite
 * (`fromTemplate: false`: initdb instead, for the test of that path).
 */
export async function embeddedDatabase(
  dataDir: string | undefined,
  { fromTemplate = true }: { fromTemplate?: boolean } = {},
): Promise<SqlDatabase> {
  const fresh = dataDir === undefined || !existsSync(join(dataDir, "PG_VERSION"));
  const template = fresh && fromTemplate ? readTemplate() : undefined;
  if (dataDir !== undefined && fresh && template === undefined) await initializeApart(dataDir);
  const options = pgliteOptions(dataDir);
  if (template !== undefined) options.loadDataDir = template;
  const db = await PGlite.create(options).catch((err: unknown) => {
    if (template === undefined) throw err;
    const where = dataDir === undefined ? "in memory" : `in ${dataDir}`;
    throw new Error(
      `initializing the embedded database ${where} from the build's template ${templatePath()}: ${(err as Error).message}`,
      { cause: err },
    );
  });
  return new EmbeddedQueries(db, db);
}

/**
 * Without a template, a new folder is initialized in a worker thread (initialize-data-dir.ts)
 * that exits before this process opens it: initdb's WebAssembly memory, which PGlite kept for
 * the life of the process (idle RSS ~850 instead of ~200 MB), goes with the worker, though the
 * process's peak still holds it.
 */
async function initializeApart(dataDir: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL("./initialize-data-dir.js", import.meta.url), {
      workerData: { dataDir },
    });
    const failed = (why: string, cause?: unknown) =>
      reject(new Error(`initializing the embedded database in ${dataDir}: ${why}`, { cause }));
    // An error is followed by an exit: the first settles the promise, the second is a no-op.
    worker.once("error", (err) => failed(err.message, err));
    worker.once("exit", (code) => (code === 0 ? resolve() : failed(`exit code ${code}`)));
  });
}
