import { apiCommands, CURSOR_PAGING, f, OFFSET_PAGING, q } from "../api-command.js";

const WEBHOOK_COLUMNS = [
  "id",
  "workspace_id",
  "url",
  "thresholds_pct",
  "credits_below_usd",
  "enabled",
];

/** --webhook-url, since --url is the gateway's. */
const WEBHOOK_FIELDS = [
  f("url", "string", { flag: "webhook-url", help: "where the alerts are POSTed (https://...)" }),
  f("secret", "string", { help: "the signing secret (default: one is made and shown once)" }),
  f("thresholds_pct", "numbers", {
    flag: "thresholds",
    help: "budget percentages, e.g. 50,80,100",
  }),
  f("credits_below_usd", "number", {
    flag: "credits-below",
    nullable: true,
    help: "alert when a workspace's credits fall below this (USD)",
  }),
  f("enabled", "boolean"),
];

/** Budget-alert webhooks and their deliveries. */
export const webhookApiCommands = apiCommands([
  {
    words: "webhooks list",
    summary: "budget-alert webhooks (every workspace, or one)",
    method: "GET",
    path: "/api/v1/webhooks",
    query: [q("workspace", "workspace_id", "this workspace's webhooks"), ...OFFSET_PAGING],
    columns: WEBHOOK_COLUMNS,
  },
  {
    words: "webhooks get",
    summary: "one webhook",
    method: "GET",
    path: "/api/v1/webhooks/:id",
  },
  {
    words: "webhooks create",
    summary: "create a webhook (its secret is printed once)",
    notice:
      "The webhook's signing secret is shown this once: store it now; the API never returns it again.",
    method: "POST",
    path: "/api/v1/webhooks",
    required: ["webhook-url"],
    body: [f("workspace_id", "string", { flag: "workspace" }), ...WEBHOOK_FIELDS],
    rawBody: true,
  },
  {
    words: "webhooks update",
    summary: "change the fields given",
    method: "PATCH",
    path: "/api/v1/webhooks/:id",
    body: WEBHOOK_FIELDS,
    rawBody: true,
  },
  {
    words: "webhooks delete",
    summary: "delete a webhook and its deliveries",
    method: "DELETE",
    path: "/api/v1/webhooks/:id",
  },
  {
    words: "webhooks test",
    summary: "send a webhook.test event (prints its queued delivery)",
    method: "POST",
    path: "/api/v1/webhooks/:id/test",
  },
  {
    words: "webhooks deliveries",
    summary: "a webhook's deliveries, newest first",
    method: "GET",
    path: "/api/v1/webhooks/:id/deliveries",
    query: CURSOR_PAGING,
    columns: ["id", "event_type", "status", "attempts", "last_status_code", "created_at"],
  },
]);
