/**
 * What a running shadow adds to a request, on one thread, without the system around it:
 * `BENCH_ONLY=shadow npm run bench` (or `node dist/bench/shadow-decision.js` after a build).
 * The request is bench/hot-path.ts's (110 characters of prose, the embedded engine's model) under
 * its guardrail (card and e-mail redactions); the shadows are the hot-path bench's two: one that
 * changes only the allowed regions (its rules decided again, the live filters' result taken as
 * it is) and one that adds every other builtin (its filters run over the text). Prints the CPU
 * microseconds per request of deciding under each, and of the live filters themselves for
 * scale. BENCH_SHADOW_SECONDS (1) of measurement per row.
 */
import { create } from "@bufbuild/protobuf";
import { BUILTIN_SLUGS } from "../domain/builtin-filters.js";
import { ModelCatalog } from "../domain/catalog/model-catalog.js";
import {
  FilterAction,
  type Guardrail,
  GuardrailSchema,
  Region,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { applyFilters, sharedCompiledFilters } from "../governance/filters/index.js";
import type { ShadowPolicy } from "../governance/governance-cache.js";
import { effectivePolicy } from "../governance/policy/effective-policy.js";
import { shadowDecisions } from "../governance/shadow-decision.js";
import { loadCatalog } from "../services/speech/catalog/load-catalog.js";
import { prose } from "./texts.js";

const SECONDS = Number(process.env.BENCH_SHADOW_SECONDS ?? 1);
const account = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };
const model = new ModelCatalog(loadCatalog({ openAi: {} }), []).find("railgate/espeak-ng");
if (!model) throw new Error("the built-in catalog has no railgate/espeak-ng");

const redact = (slug: string) => ({ slug, action: FilterAction.REDACT });
const liveFields = { contentFilterBuiltins: { values: ["credit-card", "email"].map(redact) } };
const live = effectivePolicy(
  [{ source: "key", guardrail: create(GuardrailSchema, liveFields) }],
  account,
);
const liveFilters = sharedCompiledFilters.get(live.filters);

function shadowOf(guardrail: Guardrail): ShadowPolicy {
  const policy = effectivePolicy([{ source: "key", guardrail }], account);
  return {
    guardrailId: "bench",
    expiresAtMs: Number.MAX_SAFE_INTEGER,
    policy,
    filters: sharedCompiledFilters.get(policy.filters),
  };
}

const rulesOnly = shadowOf(
  create(GuardrailSchema, {
    ...liveFields,
    allowedDataRegions: { values: [Region.GLOBAL, Region.EUROPE, Region.US] },
  }),
);
const everyBuiltin = shadowOf(
  create(GuardrailSchema, { contentFilterBuiltins: { values: BUILTIN_SLUGS.map(redact) } }),
);
const text = prose(110);
const request = {
  model,
  segments: [{ text, voice: "alloy" }],
  references: [],
  zdr: false,
  region: "global" as const,
};
const liveDecision = {
  filters: liveFilters,
  decision: { outcome: "redacted" as const, reason: "" },
};

/** CPU microseconds (user + system, this process) per call of `run`, over about SECONDS. */
async function cpuMicros(run: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 200; i++) await run();
  let calls = 0;
  const start = process.cpuUsage();
  const until = performance.now() + SECONDS * 1000;
  while (performance.now() < until) {
    for (let i = 0; i < 50; i++) await run();
    calls += 50;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

const rows: [string, number][] = [
  [
    "the live filters (card, e-mail) over the text",
    await cpuMicros(() => applyFilters(liveFilters, [{ text, role: "user" }])),
  ],
  [
    "a shadow changing the allowed regions",
    await cpuMicros(() => shadowDecisions([rulesOnly], request, 0, undefined, liveDecision)),
  ],
  [
    "a shadow adding every other builtin",
    await cpuMicros(() => shadowDecisions([everyBuiltin], request, 0, undefined, liveDecision)),
  ],
];
console.log("| per request (110 characters) | CPU µs |");
console.log("|---|---|");
for (const [what, micros] of rows) console.log(`| ${what} | ${micros.toFixed(1)} |`);
