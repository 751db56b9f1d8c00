import type { Row } from "../../output.js";
import { apiCommands, CURSOR_PAGING, q } from "../api-command.js";

const TIME_HELP = "an ISO 8601 instant or a UTC day";

/** The request log (generations), its aggregates (activity, usage) and the audit log. */
export const logApiCommands = apiCommands([
  {
    words: "generations list",
    summary: "the request log, newest first (--cursor pages on; a standard key sees its own)",
    examples: [
      "railgate generations list --limit 20 --status failed",
      "railgate generations list --model openai/gpt-4o-mini-tts --from 2026-01-31",
    ],
    method: "GET",
    path: "/api/v1/generations",
    query: [
      ...CURSOR_PAGING,
      q("key-hash", "key_hash", "made with this key"),
      q("model"),
      q("provider"),
      q("status", "status", "completed, failed, cancelled or refused"),
      q("outcome", "outcome", "a guardrail's outcome: blocked, redacted or flagged"),
      q("guardrail", "guardrail_id", "decided by this guardrail"),
      q(
        "refusal-reason",
        "refusal_reason",
        "refused for this reason: budget_exceeded, rate_limited...",
      ),
      q("search", "q", "a generation id, or part of a model or a key's name"),
      q("policy", "policy_id", "decided by this guardrail policy"),
      q("from", "from", TIME_HELP),
      q("to", "to", TIME_HELP),
      q("workspace", "workspace_id", "this workspace's (management key)"),
    ],
    columns: ["id", "created_at", "model", "provider", "status", "characters", "cost_usd"],
  },
  {
    words: "generations get",
    summary: "a generation's record (cost, timing, guardrail outcomes)",
    method: "GET",
    path: "/api/v1/generation",
    queryArgs: [{ arg: "ID", name: "id" }],
  },
  {
    words: "activity",
    summary:
      "usage per completed UTC day, model and provider over the last 30 days (today's so far: railgate usage)",
    examples: [
      "railgate activity",
      "railgate activity --date 2026-01-31 --group-by workspace",
      "railgate usage --granularity hour   # today so far, which activity does not cover yet",
    ],
    method: "GET",
    path: "/api/v1/activity",
    query: [
      q("date", "date", "one UTC day, YYYY-MM-DD"),
      q("workspace", "workspace_id", "this workspace's (management key)"),
      q("key-hash", "api_key_hash", "this key's"),
      q("group-by", "group_by", "workspace: one row per workspace too"),
    ],
    columns: ["date", "model", "provider_name", "requests", "characters", "usage"],
  },
  {
    words: "usage",
    summary: "usage series: requests, spend, time to first byte, filter actions",
    examples: [
      "railgate usage --granularity hour --group-by model",
      "railgate usage --granularity day --from 2026-01-01 --to 2026-01-31 --group-by key",
    ],
    method: "GET",
    path: "/api/v1/usage",
    query: [
      q("granularity", "granularity", "hour or day"),
      q("group-by", "group_by", "key, guardrail, model, provider, workspace or status"),
      q("from", "from", TIME_HELP),
      q("to", "to", TIME_HELP),
      q("workspace", "workspace_id", "this workspace's (management key)"),
    ],
    columns: [
      "bucket",
      "group",
      "label",
      "requests",
      "spend_usd",
      "blocked",
      "redacted",
      "flagged",
    ],
  },
  {
    words: "audit list",
    summary: "the audit log, newest first (--cursor pages on)",
    method: "GET",
    path: "/api/v1/audit-log",
    query: [
      q("action", "action", "e.g. key.create, credits.add"),
      q(
        "resource-type",
        "resource_type",
        "key, guardrail, assignment, workspace, credits or webhook",
      ),
      q("resource-id"),
      q("actor", "actor", "a key hash or label"),
      q("workspace", "workspace_id", "this workspace's events"),
      q("search", "q", "part of an action, a resource's id or name, or the actor's name"),
      q("from", "from", TIME_HELP),
      q("to", "to", TIME_HELP),
      ...CURSOR_PAGING,
    ],
    columns: ["at", "action", "resource", "actor", "changes"],
    tableRow: (e: Row) => {
      const resource = (e.resource ?? {}) as Row;
      const actor = (e.actor ?? {}) as Row;
      return {
        ...e,
        resource: resource.label ?? resource.id,
        actor: actor.name || actor.label,
      };
    },
  },
]);
