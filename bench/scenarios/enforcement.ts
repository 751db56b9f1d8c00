import { BUILTIN_SLUGS } from "../../domain/builtin-filters.js";
import { describe, fmt, signed } from "../table.js";
import { progress, type ScenarioContext } from "./context.js";
import { gatewaySpeech, PROXY_BODY, runSpeech } from "./speech-proxy.js";

const CONNECTIONS = 50;
const TARGET_ADDED_P50_MS = 1;
/** The tail too (at 50 connections). */
const TARGET_ADDED_P99_MS = 10;

const BUILTINS = BUILTIN_SLUGS;

/** Twenty plausible operator patterns (RE2 syntax), none matching the bench prose. */
const CUSTOM_PATTERNS = [
  "\\bproject[- ]?(falcon|heron|osprey)\\b",
  "(?i)internal use only",
  "(?i)\\bconfidential\\b",
  "\\bAKIA[0-9A-Z]{16}\\b",
  "\\bsk-[A-Za-z0-9]{20,}\\b",
  "\\bghp_[A-Za-z0-9]{36}\\b",
  "(?i)\\bpassword\\s*[:=]\\s*\\S+",
  "\\b[A-Z]{2}\\d{2}[A-Z0-9]{11,30}\\b",
  "(?i)\\bdo not distribute\\b",
  "\\bticket-\\d{5,}\\b",
  "(?i)\\bcustomer id\\s*#?\\d+",
  "\\b\\d{3}-\\d{3}-\\d{3}\\b",
  "(?i)\\b(acme|globex|initech) (merger|acquisition)\\b",
  "(?i)\\bsalary\\b.*\\$\\d+",
  "(?i)\\bbank account\\b",
  "(?i)\\bapi[_ -]?key\\b",
  "\\b[0-9a-f]{32}\\b",
  "(?i)\\bprivate key\\b",
  "(?i)\\bssh-rsa [A-Za-z0-9+/=]+",
  "(?i)\\bembargoed until\\b",
];

const BUDGET = { limit_usd: 1_000_000, reset_interval: "daily" };
const REGIONS = { allowed_data_regions: ["global", "europe"] };

/**
 * 4. Enforcement cost: scenario 2 at 50 connections with no guardrail, then
 * with the workspace default guardrail materialized (budget + regions) and a
 * key guardrail holding every builtin filter, 20 custom patterns, a budget
 * and region limits. Same body, same upstream: the difference in TTFB is
 * policy resolution, filtering and metering. Runs last among the main-system
 * scenarios, because the default guardrail then governs every key.
 */
export async function enforcementScenario(ctx: ScenarioContext): Promise<void> {
  const key = await ctx.api.createKey("bench enforcement");
  const gateway = ctx.system.baseUrl;
  const plain = await runSpeech(
    ctx,
    "4 enforcement, no guardrail",
    gateway,
    ctx.system.pid,
    gatewaySpeech(key.secret),
    CONNECTIONS,
  );
  const rssPlain = ctx.system.peakRssMb();

  progress("enforcement: materializing the default guardrail and a full key guardrail");
  const defaultId = await ctx.api.defaultGuardrailId();
  await ctx.api.call("PATCH", `/guardrails/${defaultId}`, {
    description: "bench workspace default",
    ...BUDGET,
    ...REGIONS,
  });
  const guardrailId = await ctx.api.createGuardrail({
    name: "bench full enforcement",
    ...BUDGET,
    ...REGIONS,
    content_filter_builtins: BUILTINS.map((slug) => ({
      slug,
      action: slug === "regex-prompt-injection" ? "flag" : "redact",
    })),
    content_filters: CUSTOM_PATTERNS.map((pattern, i) => ({
      pattern,
      action: "flag",
      label: `custom-${i + 1}`,
    })),
  });
  await ctx.api.assignKeys(guardrailId, [key.hash]);
  // One request first: proves the policy lets it through (and warms the policy cache).
  const probe = await fetch(`${gateway}/api/v1/audio/speech`, {
    method: "POST",
    headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
    body: PROXY_BODY,
  });
  const probeBytes = (await probe.arrayBuffer()).byteLength;
  if (probe.status !== 200) throw new Error(`enforcement probe answered ${probe.status}`);

  const guarded = await runSpeech(
    ctx,
    "4 enforcement, full guardrails",
    gateway,
    ctx.system.pid,
    gatewaySpeech(key.secret),
    CONNECTIONS,
  );
  const rssGuarded = ctx.system.peakRssMb();
  const addedP50 = guarded.ttfbMs.p50 - plain.ttfbMs.p50;
  const addedP99 = guarded.ttfbMs.p99 - plain.ttfbMs.p99;
  ctx.report.row({
    scenario: `4 enforcement c${CONNECTIONS} TTFB`,
    reqPerSec: guarded.reqPerSec,
    p50Ms: guarded.ttfbMs.p50,
    p99Ms: guarded.ttfbMs.p99,
    peakRssMb: rssGuarded,
    baseline: describe(plain.reqPerSec, plain.ttfbMs.p50, plain.ttfbMs.p99, "no guardrail TTFB"),
    ratio: guarded.reqPerSec / plain.reqPerSec,
    target: `added p50 ${signed(addedP50)} <= ${TARGET_ADDED_P50_MS}, p99 ${signed(addedP99)} <= ${TARGET_ADDED_P99_MS}`,
    pass: addedP50 <= TARGET_ADDED_P50_MS && addedP99 <= TARGET_ADDED_P99_MS,
  });
  ctx.report.measurement("enforcement", {
    connections: CONNECTIONS,
    builtins: BUILTINS,
    customPatterns: CUSTOM_PATTERNS.length,
    probe: {
      status: probe.status,
      bytes: probeBytes,
      generationId: probe.headers.get("x-generation-id"),
    },
    noGuardrail: plain,
    fullGuardrails: guarded,
    addedTtfbMs: { p50: addedP50, p99: addedP99 },
    systemPeakRssMb: { noGuardrail: rssPlain, fullGuardrails: rssGuarded },
  });
  progress(`enforcement: added TTFB p50 ${fmt(addedP50)} ms, p99 ${fmt(addedP99)} ms`);
}
