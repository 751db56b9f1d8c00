import type { Migration } from "./migration.js";

/**
 * The request log: one row per generation, served or refused, partitioned by UTC day on
 * created_at so retention drops whole partitions (no DELETE, no vacuum debt). Partitions are
 * created ahead by the writer and the maintenance task (partitions.ts), never here: a migration
 * runs once, days keep coming.
 *
 * The primary key includes created_at because PostgreSQL requires the partition key in every
 * unique index of a partitioned table; a record's created_at never changes, so
 * `ON CONFLICT (id, created_at) DO NOTHING` keeps inserts idempotent by generation id.
 *
 * What lists filter and charts add up are plain columns; `record` holds the rest of the
 * generation (its protobuf binary without the fields that have a column, and without its
 * trace, which is large, optional and read only in the detail view: its own nullable column).
 */
export const migration: Migration = {
  version: 1,
  name: "generations",
  sql: `
CREATE TABLE generations (
  id text NOT NULL,
  created_at timestamptz NOT NULL,
  workspace_id text NOT NULL,
  key_hash text NOT NULL,
  model text NOT NULL,
  provider text NOT NULL,
  -- completed, failed, cancelled, refused
  status text NOT NULL,
  -- Why a refused request was refused (content_blocked, budget_exceeded...); NULL when served.
  refusal_reason text,
  byok boolean NOT NULL,
  cost_usd double precision NOT NULL,
  characters integer NOT NULL,
  ttfb_ms real,
  -- Content-filter actions taken: 1 blocked, 2 redacted, 4 flagged (a bit each).
  filter_actions smallint NOT NULL,
  -- The guardrail that decided the outcome (refused it, or whose filter acted most strongly).
  guardrail_id text,
  record bytea NOT NULL,
  trace bytea,
  PRIMARY KEY (id, created_at)
) PARTITION BY RANGE (created_at);

-- GET /generation?id= uses the primary key (id leads it). Every list is "this workspace (or
-- all, or this key, or this guardrail), newest first, after this cursor".
CREATE INDEX generations_workspace_time ON generations (workspace_id, created_at DESC, id DESC);
CREATE INDEX generations_time ON generations (created_at DESC, id DESC);
CREATE INDEX generations_key_time ON generations (key_hash, created_at DESC, id DESC);
CREATE INDEX generations_guardrail_time ON generations (guardrail_id, created_at DESC, id DESC)
  WHERE guardrail_id IS NOT NULL;
-- The requests a content filter acted on (a few percent): "blocked in this workspace" reads
-- these instead of walking every record of the workspace.
CREATE INDEX generations_filtered_time ON generations (workspace_id, created_at DESC, id DESC)
  WHERE filter_actions <> 0;
`,
};
