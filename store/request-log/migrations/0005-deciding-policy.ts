import type { Migration } from "./migration.js";

/**
 * The guardrail policy that decided a request (Generation.policy_id): its own column, so that an
 * operator can list the requests a policy refused or filtered, as guardrail_id does for a
 * guardrail. Empty (null) for requests a guardrail or nothing decided.
 */
export const migration: Migration = {
  version: 5,
  name: "deciding-policy",
  sql: `
ALTER TABLE generations ADD COLUMN policy_id text;
CREATE INDEX generations_policy_time ON generations (policy_id, created_at DESC, id DESC)
  WHERE policy_id IS NOT NULL;
`,
};
