import type { Migration } from "./migration.js";

/**
 * The durable copy of the configuration Redis serves (store/config-outbox): Redis is the
 * serving copy and is refilled from these tables when it comes back empty.
 * - Every row holds the object as the store encodes it (protobuf bytes; an assignment's JSON)
 *   and `stamp`, the position of the change in its workspace's outbox: an upsert from an older
 *   snapshot never overwrites a newer one. A deletion keeps its row as a tombstone
 *   (deleted = true), so a late older snapshot cannot bring the object back.
 * - config_credit_ledger: one row per top-up or correction, by event id (drains are
 *   idempotent); a balance is the ledger's sum less what the request log charged.
 * - config_org: organization settings (the default workspace's id; "" once deleted).
 */
export const migration: Migration = {
  version: 4,
  name: "configuration",
  sql: `
CREATE TABLE config_workspaces (
  id text PRIMARY KEY,
  data bytea,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false
);

CREATE TABLE config_api_keys (
  hash text PRIMARY KEY,
  scope text NOT NULL,
  data bytea,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX config_api_keys_scope ON config_api_keys (scope);

CREATE TABLE config_guardrails (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  data bytea,
  version integer NOT NULL,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false
);
CREATE INDEX config_guardrails_workspace ON config_guardrails (workspace_id);

CREATE TABLE config_assignments (
  kind text NOT NULL,
  workspace_id text NOT NULL,
  subject text NOT NULL,
  guardrail_id text,
  record jsonb,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  PRIMARY KEY (kind, workspace_id, subject)
);
CREATE INDEX config_assignments_guardrail ON config_assignments (guardrail_id);

CREATE TABLE config_credit_ledger (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  amount_micros bigint NOT NULL,
  at timestamptz NOT NULL
);
CREATE INDEX config_credit_ledger_workspace ON config_credit_ledger (workspace_id);

CREATE TABLE config_org (
  name text PRIMARY KEY,
  value text NOT NULL,
  stamp bigint NOT NULL
);
`,
};
