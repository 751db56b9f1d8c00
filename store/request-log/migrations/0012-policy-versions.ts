import type { Migration } from "./migration.js";

/**
 * A guardrail policy's versions: one row per create, replace and restore, written in the same
 * transaction as the change's audit event (store/request-log/audit-log.ts), so a version is
 * stored exactly when the event that says who made the change is.
 * - A policy is named by its type and id: a guardrail split into policies gives each type's
 *   policy the guardrail's id.
 * - `version` is the policy's own count, taken in the same atomic write as the change
 *   (store/policies), so versions are numbered in the order the changes were made; `audit_id`
 *   makes a repeated write store a change once.
 * - `data` is the policy as the change left it (store/policies' JSON).
 * - `deleted_at` is set when the policy is deleted: its versions stay readable until the audit
 *   retention has passed since then, and are removed with the audit log's old days.
 */
export const migration: Migration = {
  version: 12,
  name: "policy-versions",
  sql: `
CREATE TABLE guardrail_policy_versions (
  policy_type text NOT NULL,
  policy_id text NOT NULL,
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
  data jsonb NOT NULL,
  deleted_at timestamptz,
  PRIMARY KEY (policy_type, policy_id, version)
);
CREATE INDEX guardrail_policy_versions_deleted ON guardrail_policy_versions (deleted_at)
  WHERE deleted_at IS NOT NULL;
`,
};
