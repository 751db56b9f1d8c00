import type { Migration } from "./migration.js";

/**
 * Budget-alert webhooks (docs/operations.md "Budget alerts (webhooks)"):
 * - webhooks: one row per webhook; the signing secret is kept as given (it is an HMAC key,
 *   needed to sign, so it cannot be hashed like an API key).
 * - webhook_once: what makes each threshold fire once per window across replicas: the first
 *   replica to insert (webhook, once key) queues the event, every other insert conflicts and
 *   queues nothing, in the same statement (store/webhooks/sql-webhook-store.ts). A row lives
 *   until its window ends (keep_until), then is pruned.
 * - webhook_deliveries: the queue and its history; workers claim due rows with
 *   FOR UPDATE SKIP LOCKED. A webhook's deletion takes its rows along.
 */
export const migration: Migration = {
  version: 3,
  name: "webhooks",
  sql: `
CREATE TABLE webhooks (
  id text PRIMARY KEY,
  workspace_id text NOT NULL,
  url text NOT NULL,
  secret text NOT NULL,
  thresholds_pct integer[] NOT NULL,
  credits_below_usd double precision,
  enabled boolean NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz
);
CREATE INDEX webhooks_workspace ON webhooks (workspace_id, created_at, id);
CREATE INDEX webhooks_created ON webhooks (created_at, id);

CREATE TABLE webhook_once (
  webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  once_key text NOT NULL,
  keep_until timestamptz,
  PRIMARY KEY (webhook_id, once_key)
);
CREATE INDEX webhook_once_expiry ON webhook_once (keep_until) WHERE keep_until IS NOT NULL;

CREATE TABLE webhook_deliveries (
  id text PRIMARY KEY,
  webhook_id text NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  workspace_id text NOT NULL,
  event_id text NOT NULL,
  event_type text NOT NULL,
  body text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL,
  delivered_at timestamptz
);
-- The workers' claim: due pending rows, oldest due first.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- GET /webhooks/:id/deliveries: newest first, by cursor.
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (webhook_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';
`,
};
