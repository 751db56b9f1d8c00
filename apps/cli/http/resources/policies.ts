import {
  type ApiCommandSpec,
  apiCommands,
  type Field,
  f,
  OFFSET_PAGING,
  q,
} from "../api-command.js";

/** The API's policy types; the CLI word of each is in kebab case. */
const TYPES = ["budget", "model_availability", "moderation"] as const;
type PolicyType = (typeof TYPES)[number];

const POLICY_COLUMNS = ["id", "name", "policy_type", "workspace_id", "is_workspace_default"];

const CONFIG = f("config", "json", { help: "the type's settings as JSON (flags set ones on top)" });

/** Example requests with the outcome each must get (not on budget policies). */
const CHECKS = f("checks", "json", {
  help: 'the checks as JSON, e.g. [{"name":"n","request":{"model":"m"},"expect":"allowed"}]',
});

/** Apply a change although some of the policy's checks fail (the audit log says so). */
const FORCE = {
  flag: "force",
  name: "force",
  value: true,
  help: "apply it although checks fail (recorded as forced)",
};

/** The settings of each type worth a flag of their own; --config takes every setting. */
const CONFIG_FLAGS: Record<PolicyType, Field[]> = {
  budget: [
    f("limit_usd", "number", { under: "config", help: "config.limit_usd: the budget in USD" }),
    f("reset_interval", "string", {
      under: "config",
      help: "config.reset_interval: daily, weekly or monthly",
    }),
    f("include_byok_in_budgets", "boolean", { flag: "include-byok", under: "config" }),
  ],
  model_availability: [
    f("allowed_models", "list", { flag: "models", under: "config" }),
    f("allowed_providers", "list", { flag: "providers", under: "config" }),
    f("allowed_data_regions", "list", { flag: "regions", under: "config" }),
  ],
  moderation: [],
};

/** Who a policy applies to: comma-separated key hashes and member user ids. */
const SUBJECT_FIELDS = [
  f("api_key_hashes", "list", { flag: "keys" }),
  f("member_ids", "list", { flag: "members" }),
  f("is_workspace_default", "boolean", { flag: "workspace-default" }),
  f("opted_out_api_key_hashes", "list", { flag: "opted-out-keys" }),
  f("opted_out_member_ids", "list", { flag: "opted-out-members" }),
];

const EXAMPLE_CONFIG: Record<PolicyType, string> = {
  budget: "--limit-usd 25 --reset-interval monthly",
  model_availability: "--models openai/gpt-4o,anthropic/claude-3.5-sonnet",
  moderation: `--config '{"content_filter_builtins":[{"slug":"email","action":"block"}]}'`,
};

function typeCommands(type: PolicyType): ApiCommandSpec[] {
  const word = `policies ${type.replaceAll("_", "-")}`;
  const base = `/api/v1/guardrails/policies/${type}`;
  const label = type.replaceAll("_", " ");
  const fields = [
    f("name", "string"),
    CONFIG,
    ...CONFIG_FLAGS[type],
    ...SUBJECT_FIELDS,
    ...(type === "budget" ? [] : [CHECKS]),
  ];
  return [
    {
      words: `${word} list`,
      summary: `${label} policies (of one workspace with --workspace)`,
      method: "GET",
      path: base,
      query: [q("workspace", "workspace_id", "only this workspace's policies"), ...OFFSET_PAGING],
      columns: POLICY_COLUMNS,
    },
    {
      words: `${word} get`,
      summary: `one ${label} policy with its assignments`,
      method: "GET",
      path: `${base}/:id`,
    },
    {
      words: `${word} create`,
      summary: `create a ${label} policy from flags and/or the API's JSON (--body or --file)`,
      method: "POST",
      path: base,
      fixed: { policy_type: type },
      body: [f("workspace_id", "string", { flag: "workspace" }), ...fields],
      rawBody: true,
      examples: [
        `railgate ${word} create --name team ${EXAMPLE_CONFIG[type]} --keys KEY_HASH`,
        `railgate ${word} create --file policy.json`,
      ],
    },
    {
      words: `${word} replace`,
      summary: `replace a ${label} policy, like PUT (lists not given keep the stored ones)`,
      method: "PUT",
      path: `${base}/:id`,
      body: [f("policy_type", "string", { flag: "type" }), ...fields],
      rawBody: true,
      switches: [FORCE],
      examples: [`railgate ${word} replace ID --name team ${EXAMPLE_CONFIG[type]}`],
    },
    {
      words: `${word} versions`,
      summary: `a ${label} policy's versions, newest first (who, when, what changed)`,
      method: "GET",
      path: `${base}/:id/versions`,
      query: OFFSET_PAGING,
      columns: ["version", "created_at", "action", "forced", "restored_from", "deleted_at"],
    },
    {
      words: `${word} version`,
      summary: "one version, with the policy as that change left it",
      method: "GET",
      path: `${base}/:id/versions/:n`,
    },
    {
      words: `${word} restore`,
      summary:
        "make a new version with version N's name, config and checks (its checks must pass, or --force)",
      method: "POST",
      path: `${base}/:id/versions/:n/restore`,
      switches: [FORCE],
    },
    ...(type === "budget"
      ? []
      : [
          {
            words: `${word} checks`,
            summary: `run a ${label} policy's checks now and show each one's outcome (kept as last_check_run)`,
            method: "POST" as const,
            path: `${base}/:id/checks/run`,
          },
        ]),
    {
      words: `${word} delete`,
      summary: `delete a ${label} policy (and its assignments)`,
      method: "DELETE",
      path: `${base}/:id`,
    },
  ];
}

const ACCOUNT_BASE = "/api/v1/guardrails/policies/account";
const ACCOUNT_FIELDS = [
  f("name", "string"),
  f("policy_type", "string", { flag: "type", help: "budget, model_availability or moderation" }),
  CONFIG,
  f("is_default", "boolean", { flag: "default", help: "is_default: covers every workspace" }),
  f("workspace_ids", "list", { flag: "workspaces" }),
  f("opted_out_workspace_ids", "list", { flag: "opted-out-workspaces" }),
  CHECKS,
];

const accountCommands: ApiCommandSpec[] = [
  {
    words: "policies account list",
    summary: "workspace-wide policies of every type (or of --type)",
    method: "GET",
    path: ACCOUNT_BASE,
    query: [q("type", "policy_type", "only policies of this type"), ...OFFSET_PAGING],
    columns: ["id", "name", "policy_type", "is_default"],
  },
  {
    words: "policies account create",
    summary: "create a workspace-wide policy (flags and/or --body JSON or --file PATH|-)",
    method: "POST",
    path: ACCOUNT_BASE,
    body: ACCOUNT_FIELDS,
    rawBody: true,
    examples: [
      `railgate policies account create --name cap --type budget --config '{"limit_usd":100,"reset_interval":"monthly"}' --default true`,
    ],
  },
  {
    words: "policies account replace",
    summary: "replace a workspace-wide policy and the workspaces it covers, like PUT",
    method: "PUT",
    path: `${ACCOUNT_BASE}/:id`,
    body: ACCOUNT_FIELDS,
    rawBody: true,
    switches: [FORCE],
    examples: [
      `railgate policies account replace ID --name cap --config '{"limit_usd":50,"reset_interval":"monthly"}' --workspaces WORKSPACE_ID`,
    ],
  },
  {
    words: "policies account versions",
    summary: "a workspace-wide policy's versions, newest first (who, when, what changed)",
    method: "GET",
    path: `${ACCOUNT_BASE}/:id/versions`,
    query: OFFSET_PAGING,
    columns: ["version", "created_at", "action", "forced", "restored_from", "deleted_at"],
  },
  {
    words: "policies account version",
    summary: "one version, with the workspace-wide policy as that change left it",
    method: "GET",
    path: `${ACCOUNT_BASE}/:id/versions/:n`,
  },
  {
    words: "policies account restore",
    summary:
      "make a new version with version N's name, config and checks (its checks must pass, or --force)",
    method: "POST",
    path: `${ACCOUNT_BASE}/:id/versions/:n/restore`,
    switches: [FORCE],
  },
  {
    words: "policies account checks",
    summary:
      "run a workspace-wide policy's checks now and show each one's outcome (kept as last_check_run)",
    method: "POST",
    path: `${ACCOUNT_BASE}/:id/checks/run`,
  },
  {
    words: "policies account delete",
    summary: "delete a workspace-wide policy",
    method: "DELETE",
    path: `${ACCOUNT_BASE}/:id`,
  },
];

/**
 * The assignments of one kind of subject. A change names the state the caller last read
 * (--expected, the data of `get`): the API refuses it with 409 when that state has moved on.
 */
function assignmentCommands(kind: "keys" | "members"): ApiCommandSpec[] {
  const word = `policies assignments ${kind}`;
  const path = `/api/v1/guardrails/policies/assignments/${kind === "keys" ? "api-keys" : "members"}/:subject`;
  const subject = kind === "keys" ? "a key (SUBJECT: its hash)" : "a member (SUBJECT: user id)";
  const change: Field[] = [
    f("policy_type", "string", { flag: "type", help: "budget, model_availability or moderation" }),
    f("policy_id", "string", { flag: "policy" }),
    f("workspace_id", "string", { flag: "workspace" }),
    f("expected_assignment", "json", {
      flag: "expected",
      help: "the state as get answered it: JSON {opted_out, policy_ids, workspace_default_policy_ids}",
    }),
  ];
  const expected = `'{"opted_out":false,"policy_ids":[],"workspace_default_policy_ids":[]}'`;
  return [
    {
      words: `${word} get`,
      summary: `the policies of one type that apply to ${subject}`,
      method: "GET",
      path,
      query: [
        q("type", "policy_type", "budget, model_availability or moderation"),
        q("workspace", "workspace_id", "in this workspace (default: the default workspace)"),
      ],
      examples: [`railgate ${word} get SUBJECT --type budget`],
    },
    ...(["assign", "unassign"] as const).map(
      (verb): ApiCommandSpec => ({
        words: `${word} ${verb}`,
        summary: `${verb} one policy ${verb === "assign" ? "to" : "from"} ${subject} (409 when --expected is stale)`,
        method: "PUT",
        path,
        fixed: { assigned: verb === "assign" },
        body: change,
        required: ["type", "policy", "expected"],
        examples: [
          `railgate ${word} ${verb} SUBJECT --type budget --policy ID --expected ${expected}`,
        ],
      }),
    ),
  ];
}

/** Guardrail policies: one family per type, workspace-wide ones, and key and member assignments. */
export const POLICY_SPECS: ApiCommandSpec[] = [
  ...TYPES.flatMap(typeCommands),
  ...accountCommands,
  ...assignmentCommands("keys"),
  ...assignmentCommands("members"),
];

export const policyApiCommands = apiCommands(POLICY_SPECS);
