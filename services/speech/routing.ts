import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { notFound } from "../../platform/errors.js";
import type { CatalogEndpoint } from "./catalog/types.js";
import type { SpeechPlan } from "./request.js";

/** A reason an endpoint cannot serve a request, or undefined when it can. */
type Rule = (e: CatalogEndpoint, plan: SpeechPlan) => string | undefined;

/** What the request itself needs of an endpoint. */
const CAPABILITY_RULES: Rule[] = [
  (e, p) =>
    p.multiSpeaker && !e.capabilities.multi_speaker ? "no multi-speaker input" : undefined,
  (e, p) => (p.speed !== 1 && !e.capabilities.speed ? "no speed control" : undefined),
  (e, p) =>
    p.references.mode === "audio" && !e.capabilities.voice_cloning ? "no voice cloning" : undefined,
  (e, p) =>
    p.references.mode === "audio" && e.capabilities.max_references < p.references.clips
      ? `at most ${e.capabilities.max_references} reference clips`
      : undefined,
  (e, p) =>
    p.references.mode === "image" && !e.capabilities.image_reference
      ? "no image reference"
      : undefined,
];

/** The request's own data policy (provider.zdr, provider.data_collection). */
const DATA_POLICY_RULES: Rule[] = [
  (e, p) =>
    p.zdr && !e.data_policy.zero_data_retention
      ? "not zero-data-retention (provider.zdr)"
      : undefined,
  (e, p) =>
    p.dataCollection === "deny" && (e.data_policy.trains_on_data || e.data_policy.publishes_prompts)
      ? "collects request data (provider.data_collection: deny)"
      : undefined,
];

export interface Exclusion {
  provider: string;
  reason: string;
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
): { endpoints: CatalogEndpoint[]; excluded: Exclusion[] } {
  const excluded: Exclusion[] = [];
  const capable = plan.model.endpoints.filter((e) => {
    const why = firstReason(CAPABILITY_RULES, e, plan);
    if (why) excluded.push({ provider: e.provider, reason: why });
    return !why;
  });
  if (capable.length === 0) {
    throw notFound(
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
    throw notFound(
      ErrorReason.NO_ALLOWED_ENDPOINT,
      "No endpoints available matching your guardrail restrictions and data policy",
    );
  }
  return { endpoints: allowed, excluded };
}

export type { Rule as RoutingRule };
