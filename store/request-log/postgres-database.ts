import pg from "pg";
import type { SqlDatabase } from "./database.js";

/**
 * Type parsers of this pool only (never pg's global defaults, which other code may rely on),
 * chosen to give the same JavaScript values PGlite gives, so code and tests see one shape.
 */
const INT8 = 20;
const DATE = 1082;
const parsers = new Map<number, (value: string) => unknown>([
  [
    INT8,
    (v) => {
      const n = Number(v);
      return Number.isSafeInteger(n) ? n : BigInt(v);
    },
  ],
  // A calendar day, not a local midnight: PGlite parses "2026-01-02" as UTC too.
  [DATE, (v) => new Date(`${v}T00:00:00Z`)],
]);

const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    parsers.get(oid) ??
    pg.types.getTypeParser(oid, format ?? "text")) as typeof pg.types.getTypeParser,
};

/** Queries on a client (inside a transaction) or on the pool (each query on any connection). */
class PostgresQueries implements SqlDatabase {
  readonly kind = "postgres" as const;
  constructor(
    private readonly target: pg.Pool | pg.PoolClient,
    private readonly inTransaction: boolean,
  ) {}

  async query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]> {
    const result = await this.target.query({ text: sql, values: params, types });
    return result.rows as R[];
  }

  async exec(sql: string): Promise<void> {
    await this.target.query({ text: sql, types });
  }

  async transaction<T>(fn: (tx: SqlDatabase) => Promise<T>): Promise<T> {
    if (this.inTransaction) return fn(this);
    const pool = this.target as pg.Pool;
    const client = await pool.connect();
    let broken: unknown;
    try {
      await client.query("BEGIN");
      const result = await fn(new PostgresQueries(client, true));
      await client.query("COMMIT");
      return result;
    } catch (err) {
      try {
        await client.query("ROLLBACK");
      } catch (rollbackErr) {
        // A connection that cannot even roll back is not handed to the next caller.
        broken = rollbackErr;
      }
      throw err;
    } finally {
      client.release(broken instanceof Error ? broken : undefined);
    }
  }

  async close(): Promise<void> {
    if (!this.inTransaction) await (this.target as pg.Pool).end();
  }
}

export interface PostgresOptions {
  url: string;
  /** Connections at most (each replica). */
  maxConnections?: number;
  /** A query unanswered after this long fails (the writer retries; a reader answers 503). */
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
}

/** A pool over a PostgreSQL server. Connections open lazily: a down server fails queries, not this call. */
export function postgresDatabase(options: PostgresOptions): SqlDatabase {
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    idleTimeoutMillis: 30_000,
    // Never on the hot path: a process may exit while connections idle.
    allowExitOnIdle: true,
  });
  // An idle connection dropped by the server must not crash the process; the next query reconnects.
  pool.on("error", () => {});
  return new PostgresQueries(pool, false);
}
