/**
 * The request log's one view of a SQL database: the same SQL (PostgreSQL dialect, `$1`
 * parameters) runs on a PostgreSQL server (`pg` pool) and on the embedded PGlite, so every
 * query, migration and test is written once. Rows come back as plain objects with the same
 * JavaScript types on both (see postgres-database.ts for the type parsers that make it so):
 * int8 -> number (bigint beyond 2^53), numeric -> string, timestamptz -> Date, bytea -> Uint8Array,
 * json/jsonb -> parsed.
 */
export interface SqlDatabase {
  /** "postgres": a server named by DATABASE_URL; "embedded": PGlite in this process. */
  readonly kind: "postgres" | "embedded";
  query<R = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Several statements, no parameters (migrations, DDL). */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` in one transaction (BEGIN ... COMMIT, ROLLBACK when it throws). Calling
   * `transaction` on `tx` again runs inside the same transaction (no savepoints).
   */
  transaction<T>(fn: (tx: SqlDatabase) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
