import type { Migration } from "./migration.js";

/**
 * The durable copy of guardrail policy documents (store/policies, store/config-outbox): one row
 * per workspace, plus the account's document under "org". `version` is the document's own
 * count, taken in the same atomic write as the change, so a row is replaced only by a higher
 * version (two drainers, or a late entry, never put an older document back). `deleted` marks a
 * deleted workspace's document; the policy-id index is rebuilt from the documents.
 */
export const migration: Migration = {
  version: 17,
  name: "policy documents",
  sql: `
CREATE TABLE config_policy_docs (
  scope text PRIMARY KEY,
  version bigint NOT NULL,
  doc jsonb,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  updated_at timestamptz NOT NULL DEFAULT now()
);
`,
};
