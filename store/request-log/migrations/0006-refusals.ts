import type { Migration } from "./migration.js";

/**
 * Refused requests as lists and dashboards read them: "refused in this workspace, for this
 * reason, newest first", and the refusal counts of the usage series, read these few records
 * instead of walking every record of the workspace.
 */
export const migration: Migration = {
  version: 6,
  name: "refusals",
  sql: `
CREATE INDEX generations_refused_time
  ON generations (workspace_id, refusal_reason, created_at DESC, id DESC)
  WHERE status = 'refused';
`,
};
