import type { Migration } from "./migration.js";

/**
 * The audit log: one row per management write (keys, guardrails, assignments, workspaces,
 * credits, webhooks), partitioned by day on `at` like the request log, so retention drops
 * whole partitions.
 *
 * Append-only: a trigger refuses every UPDATE and DELETE (on the table and, cloned by
 * PostgreSQL, on each partition) and TRUNCATE of the table, so neither a route nor a bug can
 * rewrite history. Retention is the one way rows leave: DROP TABLE of a whole day's partition,
 * which no row trigger sees.
 *
 * `(id, at)` is the primary key because a partitioned table's unique index must hold the
 * partition key; an event's `at` never changes, so ON CONFLICT (id, at) DO NOTHING keeps a
 * retried batch idempotent. Lists are "newest first after a cursor (at, id)", by workspace,
 * resource, actor or action.
 */
export const migration: Migration = {
  version: 2,
  name: "audit-log",
  sql: `
CREATE TABLE audit_events (
  id text NOT NULL,
  at timestamptz NOT NULL,
  actor_key_hash text NOT NULL,
  actor_label text NOT NULL,
  actor_name text NOT NULL,
  action text NOT NULL,
  resource_type text NOT NULL,
  resource_id text NOT NULL,
  resource_label text,
  workspace_id text,
  changes jsonb NOT NULL,
  request_id text,
  PRIMARY KEY (id, at)
) PARTITION BY RANGE (at);

CREATE INDEX audit_events_time ON audit_events (at DESC, id DESC);
CREATE INDEX audit_events_workspace_time ON audit_events (workspace_id, at DESC, id DESC);
CREATE INDEX audit_events_resource_time
  ON audit_events (resource_type, resource_id, at DESC, id DESC);
CREATE INDEX audit_events_actor_time ON audit_events (actor_key_hash, at DESC, id DESC);
CREATE INDEX audit_events_action_time ON audit_events (action, at DESC, id DESC);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only: % is not allowed (old days leave by dropping their partition)', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER audit_events_no_change BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only();
`,
};
