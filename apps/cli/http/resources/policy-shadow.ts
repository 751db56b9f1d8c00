import { type ApiCommandSpec, apiCommands, f } from "../api-command.js";

const TYPES = ["budget", "model_availability", "moderation"] as const;
type PolicyType = (typeof TYPES)[number];

const CHANGE = f("change", "json", {
  help: "the proposed change as JSON: the body PUT would take (name and config required)",
});

/** Promote although the change's checks fail (the audit log says so). */
const FORCE = {
  flag: "force",
  name: "force",
  value: true,
  help: "apply it although checks fail (recorded as forced)",
};

const EXAMPLE_CHANGE: Record<PolicyType, string> = {
  budget: `'{"name":"team","config":{"limit_usd":5,"reset_interval":"daily"}}'`,
  model_availability: `'{"name":"team","config":{"allowed_models":["openai/tts-1"]}}'`,
  moderation: `'{"name":"team","config":{"content_filter_builtins":[{"slug":"credit-card","action":"redact"}]}}'`,
};

/** A policy's what-if and shadow, beside its other commands (policies <type> ...). */
function typeCommands(type: PolicyType): ApiCommandSpec[] {
  const word = `policies ${type.replaceAll("_", "-")}`;
  const base = `/api/v1/guardrails/policies/${type}/:id`;
  const label = type.replaceAll("_", " ");
  return [
    {
      words: `${word} simulate`,
      summary: `what a replace of a ${label} policy would have done to its recorded requests (default: last 7 days); writes nothing`,
      method: "POST",
      path: `${base}/simulate`,
      body: [
        CHANGE,
        f("from", "string", { help: "window start, ISO 8601 (default: 7 days ago)" }),
        f("to", "string", { help: "window end, ISO 8601 (default: now)" }),
      ],
      required: ["change"],
      examples: [
        `railgate ${word} simulate ID --change ${EXAMPLE_CHANGE[type]} --from 2026-11-01T00:00:00Z`,
      ],
    },
    {
      words: `${word} shadow start`,
      summary: `decide a proposed replace beside the live ${label} policy until expires_at (no effect on answers)`,
      method: "POST",
      path: `${base}/shadow`,
      body: [
        CHANGE,
        f("expires_at", "string", {
          help: "when the shadow ends by itself, ISO 8601 (<= 30 days)",
        }),
      ],
      required: ["change", "expires-at"],
      examples: [
        `railgate ${word} shadow start ID --change ${EXAMPLE_CHANGE[type]} --expires-at 2026-12-09T00:00:00Z`,
      ],
    },
    {
      words: `${word} shadow show`,
      summary: "the shadow's change and what it decided differently (counts, sample generations)",
      method: "GET",
      path: `${base}/shadow`,
    },
    {
      words: `${word} shadow promote`,
      summary:
        "make the shadow's change the live policy (an audited replace; its checks must pass, or --force) and end the shadow",
      method: "POST",
      path: `${base}/shadow/promote`,
      switches: [FORCE],
    },
    {
      words: `${word} shadow end`,
      summary: "end the shadow without applying it",
      method: "DELETE",
      path: `${base}/shadow`,
    },
  ];
}

const ACCOUNT_EXAMPLE_CHANGE = `'{"name":"cap","config":{"limit_usd":50,"reset_interval":"monthly"}}'`;

/** A workspace-wide policy's what-if, over the requests of every workspace it covers. */
const accountSimulate: ApiCommandSpec = {
  words: "policies account simulate",
  summary:
    "what a replace of a workspace-wide policy would have done to its recorded requests in every workspace it covers (default: last 7 days); writes nothing",
  method: "POST",
  path: "/api/v1/guardrails/policies/account/:id/simulate",
  body: [
    CHANGE,
    f("from", "string", { help: "window start, ISO 8601 (default: 7 days ago)" }),
    f("to", "string", { help: "window end, ISO 8601 (default: now)" }),
  ],
  required: ["change"],
  examples: [
    `railgate policies account simulate ID --change ${ACCOUNT_EXAMPLE_CHANGE} --from 2026-11-01T00:00:00Z`,
  ],
};

/**
 * A workspace-wide policy's shadow: decided on the requests of every workspace it covers, its
 * report added up across them. The --grpc transport has these too (commands/policy-shadow.ts).
 */
export const ACCOUNT_SHADOW_SPECS: ApiCommandSpec[] = [
  {
    words: "policies account shadow start",
    summary:
      "decide a proposed replace beside the live workspace-wide policy, in every workspace it covers, until expires_at (no effect on answers)",
    method: "POST",
    path: "/api/v1/guardrails/policies/account/:id/shadow",
    body: [
      CHANGE,
      f("expires_at", "string", {
        help: "when the shadow ends by itself, ISO 8601 (<= 30 days)",
      }),
    ],
    required: ["change", "expires-at"],
    examples: [
      `railgate policies account shadow start ID --change ${ACCOUNT_EXAMPLE_CHANGE} --expires-at 2026-12-09T00:00:00Z`,
    ],
  },
  {
    words: "policies account shadow show",
    summary:
      "the shadow's change and what it decided differently, added up over the workspaces it covers (workspace_ids)",
    method: "GET",
    path: "/api/v1/guardrails/policies/account/:id/shadow",
  },
  {
    words: "policies account shadow promote",
    summary:
      "make the shadow's change the live workspace-wide policy (an audited replace; its checks must pass, or --force) and end the shadow",
    method: "POST",
    path: "/api/v1/guardrails/policies/account/:id/shadow/promote",
    switches: [FORCE],
  },
  {
    words: "policies account shadow end",
    summary: "end the shadow without applying it",
    method: "DELETE",
    path: "/api/v1/guardrails/policies/account/:id/shadow",
  },
];

export const policyShadowApiCommands = apiCommands([
  accountSimulate,
  ...ACCOUNT_SHADOW_SPECS,
  ...TYPES.flatMap(typeCommands),
]);
