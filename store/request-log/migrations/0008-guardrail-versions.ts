import type { Migration } from "./migration.js";

/**
 * A guardrail's versions: one row per change that made it what it is (create, update,
 * restore), written by the configuration outbox's drain in the same transaction as the
 * change's audit event and snapshot (store/config-outbox/apply-sql.ts), so a version is durable
 * exactly when its change is.
 * - `version` counts per guardrail from 1, given in drain order (the outbox's order of one
 *   workspace's changes); `audit_id` makes a repeated drain store a change once.
 * - `data` is the guardrail as the change left it, in the store's field encoding.
 * - `deleted_at` is set when the guardrail is deleted: its versions stay readable until the
 *   audit retention has passed since then, and are removed with the audit log's old days.
 */
export const migration: Migration = {
  version: 8,
  name: "guardrail-versions",
  sql: `
CREATE TABLE guardrail_versions (
  guardrail_id text NOT NULL,
  version integer NOT NULL,
  workspace_id text NOT NULL,
  audit_id text NOT NULL UNIQUE,
  at timestamptz NOT NULL,
  actor_key_hash text NOT NULL,
  actor_label text NOT NULL,
  actor_name text NOT NULL,
  action text NOT NULL,
  changes jsonb NOT NULL,
  forced boolean NOT NULL DEFAULT false,
  restored_from integer,
  data bytea NOT NULL,
  deleted_at timestamptz,
  PRIMARY KEY (guardrail_id, version)
);
CREATE INDEX guardrail_versions_workspace ON guardrail_versions (workspace_id);
CREATE INDEX guardrail_versions_deleted ON guardrail_versions (deleted_at)
  WHERE deleted_at IS NOT NULL;
`,
};
