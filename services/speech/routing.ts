import type { CatalogEndpoint } from "../../domain/catalog/types.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { notFound } from "../../platform/rpc/errors.js";
import type { SpeechPlan } from "./request.js";
import type { EndpointMeasure } from "./routing/endpoint-stats.js";
import type { RoutingPreferences } from "./routing/preferences.js";
import { type Exclusion, skippedStep, withRouting } from "./routing/steps.js";

/** A reason an endpoint cannot serve a request, or undefined when it can. */
type Rule = (e: CatalogEndpoint, plan: SpeechPlan) => string | undefined;

/** What the request itself needs of an endpoint. */
const CAPABILITY_RULES: Rule[] = [
  (e, p) => (p.multiSpeaker && !e.capabilities.multiSpeaker ? "no multi-speaker input" : undefined),
  (e, p) => (p.speed !== 1 && !e.capabilities.speed ? "no speed control" : undefined),
  (e, p) => (e.formats.includes(p.formatValue) ? undefined : `does not produce ${p.format}`),
  (e, p) =>
    p.references.mode === "audio" && !e.capabilities.voiceCloning ? "no voice cloning" : undefined,
  (e, p) =>
    p.references.mode === "audio" && e.capabilities.maxReferences < p.references.clips
      ? `at most ${e.capabilities.maxReferences} reference clips`
      : undefined,
  (e, p) =>
    p.references.mode === "image" && !e.capabilities.imageReference
      ? "no image reference"
      : undefined,
];

/** The request's own data policy (provider.zdr, provider.data_collection). */
const DATA_POLICY_RULES: Rule[] = [
  (e, p) =>
    p.zdr && !e.dataPolicy.zeroDataRetention ? "not zero-data-retention (provider.zdr)" : undefined,
  (e, p) =>
    p.dataCollection === "deny" && (e.dataPolicy.trainsOnData || e.dataPolicy.publishesPrompts)
      ? "collects request data (provider.data_collection: deny)"
      : undefined,
];

/** Dollars as the record shows them: enough digits for a fraction of a cent. */
function usd(n: number): string {
  return `$${Number(n.toPrecision(6))}`;
}

/** The request's provider preferences (OpenRouter's provider.only, ignore, max_price). */
const PREFERENCE_RULES: Rule[] = [
  (e, p) =>
    p.routing.only.length > 0 && !p.routing.only.includes(e.provider)
      ? "not in provider.only"
      : undefined,
  (e, p) => (p.routing.ignore.includes(e.provider) ? "in provider.ignore" : undefined),
  (e, p) => {
    const max = p.routing.maxPrice.prompt;
    return max !== undefined && e.pricePerMillionChars > max
      ? `price ${usd(e.pricePerMillionChars)} per million characters is over provider.max_price.prompt ${usd(max)}`
      : undefined;
  },
  (e, p) => {
    const max = p.routing.maxPrice.request;
    const cost = (p.characters * e.pricePerMillionChars) / 1_000_000;
    return max !== undefined && cost > max
      ? `this request would cost ${usd(cost)}, over provider.max_price.request ${usd(max)}`
      : undefined;
  },
];

/** How provider.sort ranks endpoints: lower first. Unmeasured ones rank after every measured one. */
const SORT_KEYS = {
  price: (e: CatalogEndpoint) => e.pricePerMillionChars,
  latency: (_e: CatalogEndpoint, m: EndpointMeasure) => m.ttfbMs,
  throughput: (_e: CatalogEndpoint, m: EndpointMeasure) =>
    m.throughputBps === undefined ? undefined : -m.throughputBps,
} as const;

/**
 * The order endpoints are tried in, as OpenRouter's provider routing: provider.sort (else the
 * catalog's order, the operator's preference), ties in catalog order; then provider.order's
 * providers move to the front in its order. With allow_fallbacks false only the ordered
 * providers remain (without an order, only the first endpoint): the rest are excluded.
 */
function ordered(
  endpoints: CatalogEndpoint[],
  prefs: RoutingPreferences,
  measure: (e: CatalogEndpoint) => EndpointMeasure,
  excluded: Exclusion[],
): CatalogEndpoint[] {
  // Most requests say nothing of order: catalog order, nothing to build (the hot path).
  if (!prefs.sort && prefs.order.length === 0 && prefs.allowFallbacks) return endpoints;
  let list = endpoints;
  const sort = prefs.sort;
  if (sort) {
    const key = SORT_KEYS[sort];
    const keyed = endpoints.map((e, i) => ({ e, i, k: key(e, measure(e)) }));
    keyed.sort((a, b) => {
      if (a.k === undefined || b.k === undefined) {
        return a.k === b.k ? a.i - b.i : a.k === undefined ? 1 : -1;
      }
      return a.k - b.k || a.i - b.i;
    });
    list = keyed.map((x) => x.e);
  }
  const first = prefs.order.flatMap((p) => list.filter((e) => e.provider === p));
  const front = [...new Set(first)];
  const rest = list.filter((e) => !front.includes(e));
  if (prefs.allowFallbacks) return [...front, ...rest];
  const kept = prefs.order.length > 0 ? front : list.slice(0, 1);
  for (const e of list) {
    if (kept.includes(e)) continue;
    excluded.push({
      provider: e.provider,
      reason:
        prefs.order.length > 0
          ? "not in provider.order (provider.allow_fallbacks: false)"
          : "a fallback (provider.allow_fallbacks: false)",
    });
  }
  return kept;
}

function firstReason(rules: Rule[], e: CatalogEndpoint, plan: SpeechPlan): string | undefined {
  for (const rule of rules) {
    const why = rule(e, plan);
    if (why) return why;
  }
  return undefined;
}

/**
 * The endpoints that may serve a request, in catalog order (the operator's
 * preference, also the fail-over order). Capability misses and policy misses
 * get the two distinct 404 messages of the spec.
 */
export function routeEndpoints(
  plan: SpeechPlan,
  policyRules: Rule[] = [],
  measure: (e: CatalogEndpoint) => EndpointMeasure = () => ({}),
): { endpoints: CatalogEndpoint[]; excluded: Exclusion[] } {
  const excluded: Exclusion[] = [];
  const capable = plan.model.endpoints.filter((e) => {
    const why = firstReason(CAPABILITY_RULES, e, plan);
    if (why) excluded.push({ provider: e.provider, reason: why });
    return !why;
  });
  // Each refusal keeps the exclusions with it: the refusal record lists them.
  const refuse = (reason: ErrorReason, message: string) =>
    withRouting(notFound(reason, message), excluded.map(skippedStep));
  if (capable.length === 0) {
    throw refuse(
      ErrorReason.NO_CAPABLE_ENDPOINT,
      "No endpoints available matching the request's requirements",
    );
  }
  const allowed = capable.filter((e) => {
    const why = firstReason([...DATA_POLICY_RULES, ...policyRules], e, plan);
    if (why) excluded.push({ provider: e.provider, reason: why });
    return !why;
  });
  if (allowed.length === 0) {
    throw refuse(
      ErrorReason.NO_ALLOWED_ENDPOINT,
      "No endpoints available matching your guardrail restrictions and data policy",
    );
  }
  const preferred = allowed.filter((e) => {
    const why = firstReason(PREFERENCE_RULES, e, plan);
    if (why) excluded.push({ provider: e.provider, reason: why });
    return !why;
  });
  if (preferred.length === 0) {
    throw refuse(
      ErrorReason.NO_ALLOWED_ENDPOINT,
      "No endpoints available matching your provider preferences (provider.only, provider.ignore, provider.max_price)",
    );
  }
  const endpoints = ordered(preferred, plan.routing, measure, excluded);
  if (endpoints.length === 0) {
    throw refuse(
      ErrorReason.NO_ALLOWED_ENDPOINT,
      "No endpoints available: no provider in provider.order can serve this request, and provider.allow_fallbacks is false",
    );
  }
  return { endpoints, excluded };
}

export type { Exclusion, Rule as RoutingRule };
