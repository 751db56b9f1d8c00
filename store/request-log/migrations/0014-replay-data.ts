import type { Migration } from "./migration.js";

/**
 * What a what-if replay reads to decide content filters, for workspaces that keep it (their
 * replay_data): which builtin detectors matched the request's text and how often
 * (`{"email": 1}`; `{}` when none did), or the text itself, encrypted (AES-256-GCM, never
 * returned by any API) until `replay_input_until`, when the hourly maintenance clears it, if
 * its partition was not dropped first. NULL for every other record.
 */
export const migration: Migration = {
  version: 14,
  name: "replay-data",
  sql: `
ALTER TABLE generations
  ADD COLUMN replay_detections jsonb,
  ADD COLUMN replay_input bytea,
  ADD COLUMN replay_input_until timestamptz;
CREATE INDEX generations_replay_input_until ON generations (replay_input_until)
  WHERE replay_input IS NOT NULL;
`,
};
