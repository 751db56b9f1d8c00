import { apiCommands, f, OFFSET_PAGING, q } from "../api-command.js";

const KEY_COLUMNS = ["hash", "name", "kind", "workspace_id", "disabled", "limit", "usage"];
const WORKSPACE_COLUMNS = ["id", "name", "slug", "is_default", "created_at"];

/** What a key's limit and expiry are, for create and update alike. */
const KEY_LIMITS = [
  f("limit", "number", { nullable: true, help: "spend limit in USD (null: none)" }),
  f("limit_reset", "string", {
    nullable: true,
    help: "the limit's window: daily, weekly or monthly (null: all-time)",
  }),
  f("include_byok_in_limit", "boolean", {
    help: "the limit counts spend through BYOK endpoints too",
  }),
  f("expires_at", "string", {
    nullable: true,
    help: "expiry, an ISO 8601 UTC instant YYYY-MM-DDTHH:MM:SSZ (null: never)",
  }),
  f("rate_limit_per_minute", "integer", {
    flag: "rate-limit",
    nullable: true,
    help: "speech requests per minute (null: the deployment's default)",
  }),
];

/** A workspace's writable fields: create and update take the same ones. */
const WORKSPACE_BODY = [
  f("name", "string"),
  f("slug", "string"),
  f("description", "string", { nullable: true }),
  f("audio_cache", "boolean", { help: "serve identical speech requests from the cache" }),
];

/** Keys, workspaces and credits: the account's resources. */
export const accountApiCommands = apiCommands([
  {
    words: "keys list",
    summary: "API keys (--include-disabled for disabled ones too)",
    method: "GET",
    path: "/api/v1/keys",
    query: [
      q("workspace", "workspace_id", "only the keys of this workspace"),
      { ...q("include-disabled"), type: "boolean", help: "disabled keys too" },
      q("search", "q", "part of a key's name or label, or the start of its hash"),
      ...OFFSET_PAGING,
    ],
    columns: KEY_COLUMNS,
  },
  {
    words: "keys get",
    summary: "one key, its limit and usage",
    method: "GET",
    path: "/api/v1/keys/:hash",
  },
  {
    words: "keys current",
    summary: "the calling key itself (any key)",
    method: "GET",
    path: "/api/v1/key",
  },
  {
    words: "keys create",
    summary: "create a key and print its secret once",
    method: "POST",
    path: "/api/v1/keys",
    notice:
      "The key's secret (key) is shown this once: store it now; the API never returns it again.",
    examples: [
      "railgate keys create --name app --limit 20 --limit-reset monthly",
      "railgate keys create --name ops --management",
    ],
    required: ["name"],
    switches: [{ flag: "management", name: "kind", value: "management", help: "a management key" }],
    body: [
      f("name", "string"),
      f("workspace_id", "string", {
        flag: "workspace",
        help: "its workspace (default: the default one)",
      }),
      f("member_user_id", "string", {
        flag: "member",
        nullable: true,
        help: "the member who owns it",
      }),
      ...KEY_LIMITS,
    ],
    rawBody: true,
  },
  {
    words: "keys update",
    summary: "change the fields given (name, limit, limit_reset, expires_at, rate limit, disabled)",
    method: "PATCH",
    path: "/api/v1/keys/:hash",
    body: [f("name", "string"), f("disabled", "boolean"), ...KEY_LIMITS],
    rawBody: true,
  },
  ...(["disable", "enable"] as const).map((verb) => ({
    words: `keys ${verb}`,
    summary: `${verb} a key`,
    method: "PATCH" as const,
    path: "/api/v1/keys/:hash",
    fixed: { disabled: verb === "disable" },
  })),
  {
    words: "keys delete",
    summary: "delete a key",
    method: "DELETE",
    path: "/api/v1/keys/:hash",
  },
  {
    words: "workspaces list",
    summary: "workspaces",
    method: "GET",
    path: "/api/v1/workspaces",
    query: OFFSET_PAGING,
    columns: WORKSPACE_COLUMNS,
  },
  {
    words: "workspaces get",
    summary: "one workspace",
    method: "GET",
    path: "/api/v1/workspaces/:id",
  },
  {
    words: "workspaces create",
    summary: "create a workspace",
    method: "POST",
    path: "/api/v1/workspaces",
    required: ["name"],
    body: WORKSPACE_BODY,
    rawBody: true,
  },
  {
    words: "workspaces update",
    summary: "change the fields given",
    method: "PATCH",
    path: "/api/v1/workspaces/:id",
    body: WORKSPACE_BODY,
    rawBody: true,
  },
  {
    words: "workspaces delete",
    summary: "delete a workspace",
    method: "DELETE",
    path: "/api/v1/workspaces/:id",
  },
  {
    words: "workspaces members list",
    summary:
      "a workspace's members: added, and implicit (named by its keys, assignments, policies)",
    method: "GET",
    path: "/api/v1/workspaces/:id/members",
    query: OFFSET_PAGING,
    columns: ["user_id", "role", "implicit", "created_at", "id"],
  },
  {
    words: "workspaces members add",
    summary: "add members (user ids) to a workspace",
    method: "POST",
    path: "/api/v1/workspaces/:id/members/add",
    examples: ["railgate workspaces members add default alice bob"],
    rest: { arg: "USER_ID", name: "user_ids" },
  },
  {
    words: "workspaces members remove",
    summary: "remove members from a workspace (not one who owns enabled keys there)",
    method: "POST",
    path: "/api/v1/workspaces/:id/members/remove",
    rest: { arg: "USER_ID", name: "user_ids" },
  },
  {
    words: "workspaces audio-cache",
    summary: "a workspace's audio cache: clips, bytes, hits, misses and hit ratio",
    method: "GET",
    path: "/api/v1/workspaces/:id/audio-cache",
  },
  {
    words: "workspaces credits",
    summary: "a workspace's credits and usage",
    method: "GET",
    path: "/api/v1/workspaces/:id/credits",
  },
  {
    words: "credits get",
    summary: "credits of a workspace, or of the whole organization without --workspace",
    method: "GET",
    path: "/api/v1/credits",
    query: [q("workspace", "workspace_id", "this workspace's credits")],
  },
  {
    words: "credits add",
    summary: "add credits in USD to a workspace (it becomes metered)",
    method: "POST",
    path: "/api/v1/workspaces/:id/credits",
    pathFlags: { id: "workspace" },
    required: ["workspace", "amount"],
    body: [f("amount_usd", "number", { flag: "amount", help: "USD to add" })],
  },
]);
