import type { Migration } from "./migration.js";

/**
 * The durable copy of added workspace members (store/config-outbox), as 0004's tables: the
 * record as the store keeps it (a MemberRecord's JSON), the change's stamp, and a tombstone when
 * the member was removed (or its workspace deleted), so a late older snapshot cannot bring it back.
 */
export const migration: Migration = {
  version: 10,
  name: "workspace members",
  sql: `
CREATE TABLE config_workspace_members (
  workspace_id text NOT NULL,
  user_id text NOT NULL,
  record jsonb,
  stamp bigint NOT NULL,
  deleted boolean NOT NULL DEFAULT false,
  PRIMARY KEY (workspace_id, user_id)
);
`,
};
