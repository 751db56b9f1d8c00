import { apiCommands, f, OFFSET_PAGING, q } from "../api-command.js";

const GUARDRAIL_COLUMNS = [
  "id",
  "name",
  "workspace_id",
  "limit_usd",
  "reset_interval",
  "is_workspace_default",
];

/** The guardrail fields worth a flag; --body/--file take every field of the API's JSON. */
const GUARDRAIL_FIELDS = [
  f("name", "string"),
  f("description", "string", { nullable: true }),
  f("limit_usd", "number", { nullable: true, help: "budget in USD (null: none)" }),
  f("reset_interval", "string", {
    nullable: true,
    help: "the budget's window: daily, weekly or monthly",
  }),
  f("allowed_data_regions", "list", { flag: "regions", nullable: true }),
  f("allowed_models", "list", { flag: "models", nullable: true }),
  f("allowed_providers", "list", { flag: "providers", nullable: true }),
];

/** Apply a change although some of the guardrail's checks fail (the audit log says so). */
const FORCE = {
  flag: "force",
  name: "force",
  value: true,
  help: "apply it although checks fail (recorded as forced)",
};

function assignments(kind: "keys" | "members", arg: string, field: string) {
  const base = `/api/v1/guardrails/:id/assignments/${kind}`;
  return [
    {
      words: `assignments ${kind} list`,
      summary: `${kind.slice(0, -1)} assignments (of one guardrail with --guardrail)`,
      method: "GET" as const,
      path: base,
      pathFlags: { id: "guardrail" },
      fallbackPath: `/api/v1/guardrails/assignments/${kind}`,
      query: OFFSET_PAGING,
      columns:
        kind === "keys"
          ? ["guardrail_id", "key_hash", "key_name", "assigned_by", "created_at"]
          : ["guardrail_id", "user_id", "workspace_id", "assigned_by", "created_at"],
    },
    {
      words: `assignments ${kind} assign`,
      summary: `assign a guardrail to ${kind}`,
      method: "POST" as const,
      path: base,
      rest: { arg, name: field },
    },
    {
      words: `assignments ${kind} unassign`,
      summary: `remove a guardrail from ${kind}`,
      method: "POST" as const,
      path: `${base}/remove`,
      rest: { arg, name: field },
    },
  ];
}

/** Guardrails, their assignments, and explain (what they make of a key). */
export const guardrailApiCommands = apiCommands([
  {
    words: "guardrails list",
    summary: "guardrails of a workspace (default: the default workspace)",
    method: "GET",
    path: "/api/v1/guardrails",
    query: [q("workspace", "workspace_id", "this workspace's guardrails"), ...OFFSET_PAGING],
    columns: GUARDRAIL_COLUMNS,
  },
  {
    words: "guardrails get",
    summary: "one guardrail",
    method: "GET",
    path: "/api/v1/guardrails/:id",
  },
  {
    words: "guardrails create",
    summary: "create from flags and/or the API's guardrail JSON (--body JSON or --file PATH|-)",
    method: "POST",
    path: "/api/v1/guardrails",
    body: [f("workspace_id", "string", { flag: "workspace" }), ...GUARDRAIL_FIELDS],
    rawBody: true,
  },
  {
    words: "guardrails update",
    summary: "change the fields given (flags, --body JSON or --file PATH|-), like PATCH",
    method: "PATCH",
    path: "/api/v1/guardrails/:id",
    body: GUARDRAIL_FIELDS,
    rawBody: true,
    switches: [FORCE],
  },
  {
    words: "guardrails versions",
    summary: "a guardrail's versions, newest first (who, when, what changed)",
    method: "GET",
    path: "/api/v1/guardrails/:id/versions",
    query: OFFSET_PAGING,
    columns: ["version", "created_at", "action", "forced", "restored_from", "deleted_at"],
  },
  {
    words: "guardrails version",
    summary: "one version, with the guardrail as that change left it",
    method: "GET",
    path: "/api/v1/guardrails/:id/versions/:n",
  },
  {
    words: "guardrails restore",
    summary: "make a new version equal to version N (its checks must pass, or --force)",
    method: "POST",
    path: "/api/v1/guardrails/:id/versions/:n/restore",
    switches: [FORCE],
  },
  {
    words: "guardrails simulate",
    summary:
      "what a change would have done to the recorded requests in a window (default: last 7 days); writes nothing",
    method: "POST",
    path: "/api/v1/guardrails/:id/simulate",
    body: [
      f("change", "json", { help: "the proposed change as JSON: the body PATCH would take" }),
      f("from", "string", { help: "window start, ISO 8601 (default: 7 days ago)" }),
      f("to", "string", { help: "window end, ISO 8601 (default: now)" }),
    ],
    required: ["change"],
    examples: [
      `railgate guardrails simulate ID --change '{"limit_usd":5,"reset_interval":"daily"}' --from 2026-11-01T00:00:00Z --to 2026-11-08T00:00:00Z`,
    ],
  },
  {
    words: "guardrails shadow start",
    summary:
      "decide a proposed change beside the live guardrail until expires_at (no effect on answers)",
    method: "POST",
    path: "/api/v1/guardrails/:id/shadow",
    body: [
      f("change", "json", { help: "the proposed change as JSON: the body PATCH would take" }),
      f("expires_at", "string", { help: "when the shadow ends by itself, ISO 8601 (<= 30 days)" }),
    ],
    required: ["change", "expires-at"],
    examples: [
      `railgate guardrails shadow start ID --change '{"allowed_models":["openai/tts-1"]}' --expires-at 2026-12-09T00:00:00Z`,
    ],
  },
  {
    words: "guardrails shadow show",
    summary: "the shadow's change and what it decided differently (counts, sample generations)",
    method: "GET",
    path: "/api/v1/guardrails/:id/shadow",
  },
  {
    words: "guardrails shadow promote",
    summary: "make the shadow's change live (an audited update; its checks must pass, or --force)",
    method: "POST",
    path: "/api/v1/guardrails/:id/shadow/promote",
    switches: [FORCE],
  },
  {
    words: "guardrails shadow end",
    summary: "end the shadow without applying it",
    method: "DELETE",
    path: "/api/v1/guardrails/:id/shadow",
  },
  {
    words: "guardrails checks",
    summary: "run a guardrail's checks now and show each one's outcome (kept as last_check_run)",
    method: "POST",
    path: "/api/v1/guardrails/:id/checks/run",
  },
  {
    words: "guardrails delete",
    summary: "delete a guardrail (and its assignments)",
    method: "DELETE",
    path: "/api/v1/guardrails/:id",
  },
  ...assignments("keys", "KEY_HASH", "key_hashes"),
  ...assignments("members", "USER_ID", "member_user_ids"),
  {
    words: "explain",
    summary: "why a key's requests are allowed or refused (management key)",
    method: "GET",
    path: "/api/v1/keys/:hash/explain",
    query: [
      q("model", "model", "for this model"),
      q("region", "region", "global, europe or us"),
      q("generation-id", "generation_id", "also which endpoints this generation tried, and why"),
    ],
  },
]);
