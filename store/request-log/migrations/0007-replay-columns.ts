import type { Migration } from "./migration.js";

/**
 * What a what-if replay reads of each record, as columns so it never decodes a record's bytes:
 * the guardrails that governed the request ("<source>:<guardrail id>", precedence order), the
 * region it was served in (railgate.guardrail.v1.Region's number) and the data policy of the
 * endpoint that served (bits: 1 zero data retention, 2 safety retention, 4 trains on data,
 * 8 publishes prompts). Records written before this migration have them NULL: a replay reads
 * those as governed by no guardrail.
 */
export const migration: Migration = {
  version: 7,
  name: "replay-columns",
  sql: `
ALTER TABLE generations
  ADD COLUMN governed_by text[],
  ADD COLUMN data_region smallint,
  ADD COLUMN endpoint_policy smallint;
`,
};
