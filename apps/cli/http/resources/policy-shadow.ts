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

/** A policy's what-if command under `word`: the change and the window replayed. */
function simulateCommand(
  word: string,
  path: string,
  summary: string,
  example: string,
): ApiCommandSpec {
  return {
    words: `${word} simulate`,
    summary,
    method: "POST",
    path,
    body: [
      CHANGE,
      f("from", "string", { help: "window start, ISO 8601 (default: 7 days ago)" }),
      f("to", "string", { help: "window end, ISO 8601 (default: now)" }),
    ],
    required: ["change"],
    examples: [`railgate ${word} simulate ID --change ${example} --from 2026-11-01T00:00:00Z`],
  };
}

/** A policy's shadow commands (start, show, promote, end) under `word`, on the routes at `path`. */
function shadowCommands(o: {
  word: string;
  path: string;
  /** Whom the shadow is decided beside, as the start's summary says it. */
  beside: string;
  /** What a promote makes the change. */
  live: string;
  /** What show answers. */
  report: string;
  example: string;
}): ApiCommandSpec[] {
  return [
    {
      words: `${o.word} shadow start`,
      summary: `decide a proposed replace beside ${o.beside} until expires_at (no effect on answers)`,
      method: "POST",
      path: o.path,
      body: [
        CHANGE,
        f("expires_at", "string", {
          help: "when the shadow ends by itself, ISO 8601 (<= 30 days)",
        }),
      ],
      required: ["change", "expires-at"],
      examples: [
        `railgate ${o.word} shadow start ID --change ${o.example} --expires-at 2026-12-09T00:00:00Z`,
      ],
    },
    { words: `${o.word} shadow show`, summary: o.report, method: "GET", path: o.path },
    {
      words: `${o.word} shadow promote`,
      summary: `make the shadow's change ${o.live} (an audited replace; its checks must pass, or --force) and end the shadow`,
      method: "POST",
      path: `${o.path}/promote`,
      switches: [FORCE],
    },
    {
      words: `${o.word} shadow end`,
      summary: "end the shadow without applying it",
      method: "DELETE",
      path: o.path,
    },
  ];
}

/** A policy's what-if and shadow, beside its other commands (policies <type> ...). */
function typeCommands(type: PolicyType): ApiCommandSpec[] {
  const word = `policies ${type.replaceAll("_", "-")}`;
  const base = `/api/v1/guardrails/policies/${type}/:id`;
  const label = type.replaceAll("_", " ");
  return [
    simulateCommand(
      word,
      `${base}/simulate`,
      `what a replace of a ${label} policy would have done to its recorded requests (default: last 7 days); writes nothing`,
      EXAMPLE_CHANGE[type],
    ),
    ...shadowCommands({
      word,
      path: `${base}/shadow`,
      beside: `the live ${label} policy`,
      live: "the live policy",
      report: "the shadow's change and what it decided differently (counts, sample generations)",
      example: EXAMPLE_CHANGE[type],
    }),
  ];
}

const ACCOUNT_EXAMPLE_CHANGE = `'{"name":"cap","config":{"limit_usd":50,"reset_interval":"monthly"}}'`;

/** A workspace-wide policy's what-if, over the requests of every workspace it covers. */
const accountSimulate = simulateCommand(
  "policies account",
  "/api/v1/guardrails/policies/account/:id/simulate",
  "what a replace of a workspace-wide policy would have done to its recorded requests in every workspace it covers (default: last 7 days); writes nothing",
  ACCOUNT_EXAMPLE_CHANGE,
);

/**
 * A workspace-wide policy's shadow: decided on the requests of every workspace it covers, its
 * report added up across them. The --grpc transport has these too (commands/policy-shadow.ts).
 */
export const ACCOUNT_SHADOW_SPECS: ApiCommandSpec[] = shadowCommands({
  word: "policies account",
  path: "/api/v1/guardrails/policies/account/:id/shadow",
  beside: "the live workspace-wide policy, in every workspace it covers,",
  live: "the live workspace-wide policy",
  report:
    "the shadow's change and what it decided differently, added up over the workspaces it covers (workspace_ids)",
  example: ACCOUNT_EXAMPLE_CHANGE,
});

export const policyShadowApiCommands = apiCommands([
  accountSimulate,
  ...ACCOUNT_SHADOW_SPECS,
  ...TYPES.flatMap(typeCommands),
]);
