/**
 * One step of the database schema. Written as a TypeScript module (tsc does not copy .sql
 * files into dist/), holding plain PostgreSQL that runs unchanged on a server and on PGlite.
 * A migration never changes once released: a later change is a new version.
 */
export interface Migration {
  /** 1, 2, 3...: applied in this order, each exactly once per database. */
  version: number;
  name: string;
  sql: string;
}
