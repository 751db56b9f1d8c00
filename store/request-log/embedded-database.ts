import { PGlite, type Transaction } from "@electric-sql/pglite";
import type { SqlDatabase } from "./database.js";

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
 * `dataDir` is undefined (tests: nothing on disk, gone with the process).
 */
export async function embeddedDatabase(dataDir: string | undefined): Promise<SqlDatabase> {
  const db = await PGlite.create(dataDir === undefined ? {} : { dataDir });
  return new EmbeddedQueries(db, db);
}
