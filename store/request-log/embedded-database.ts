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
 * (`fromTemplate: false`: initdb instead, for the test of that path); a new folder is made in
 * a worker thread before this process opens it (initializeApart).
 */
export async function embeddedDatabase(
  dataDir: string | undefined,
  { fromTemplate = true }: { fromTemplate?: boolean } = {},
): Promise<SqlDatabase> {
  const fresh = dataDir === undefined || !existsSync(join(dataDir, "PG_VERSION"));
  const template = fresh && fromTemplate && existsSync(templatePath());
  if (dataDir !== undefined && fresh) await initializeApart(dataDir, template);
  const options = pgliteOptions(dataDir);
  // In memory there is no folder a worker could hand over: loaded here.
  const loadsHere = dataDir === undefined && template;
  if (loadsHere) options.loadDataDir = readTemplate();
  const db = await PGlite.create(options).catch((err: unknown) => {
    if (!loadsHere) throw err;
    throw new Error(
      `initializing the embedded database in memory${fromBuildTemplate()}: ${(err as Error).message}`,
      { cause: err },
    );
  });
  return new EmbeddedQueries(db, db);
}

/** How a start-up error names the template it was loading. */
function fromBuildTemplate(): string {
  return ` from the build's template ${templatePath()}`;
}

/**
 * A new folder is made in a worker thread (initialize-data-dir.ts) that exits before this
 * process opens it: what PGlite keeps after making it (initdb's WebAssembly instance, ~650 MB;
 * or the template's tar and extraction buffers, ~90 MB of ArrayBuffers), which the process
 * would otherwise hold for its whole life, goes with the worker (the system's idle RSS fell by
 * ~50 MB, not 90: the freed memory of the worker's malloc arena is not all given back), though
 * the process's peak still holds it.
 */
async function initializeApart(dataDir: string, fromTemplate: boolean): Promise<void> {
  const how = fromTemplate ? fromBuildTemplate() : "";
  await new Promise<void>((resolve, reject) => {
    const worker = new Worker(new URL("./initialize-data-dir.js", import.meta.url), {
      workerData: { dataDir, fromTemplate },
    });
    const failed = (why: string, cause?: unknown) =>
      reject(
        new Error(`initializing the embedded database in ${dataDir}${how}: ${why}`, { cause }),
      );
    // An error is followed by an exit: the first settles the promise, the second is a no-op.
    worker.once("error", (err) => failed(err.message, err));
    worker.once("exit", (code) => (code === 0 ? resolve() : failed(`exit code ${code}`)));
  });
}
