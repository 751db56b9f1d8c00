import type { Migration } from "./migration.js";

/**
 * What a guardrail's shadow report reads of each record without decoding it: the guardrail whose
 * shadow decided the request differently, and how ("<live>><shadow>", e.g. "allowed>redacted").
 * NULL where no shadow differed, which is almost every record: the index holds only the others.
 */
export const migration: Migration = {
  version: 9,
  name: "shadow-outcomes",
  sql: `
ALTER TABLE generations
  ADD COLUMN shadow_guardrail_id text,
  ADD COLUMN shadow_change text;
CREATE INDEX generations_shadow_idx ON generations (shadow_guardrail_id, created_at)
  WHERE shadow_guardrail_id IS NOT NULL;
`,
};
