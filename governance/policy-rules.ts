import type { CatalogEndpoint, CatalogModel } from "../domain/catalog/types.js";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { type Decider, deciderOf } from "./decided-by.js";
import type { EffectivePolicy, GoverningGuardrail, ZdrVendor } from "./policy/types.js";

/** A reason an endpoint is excluded by the policy, or undefined when it may serve. */
export type EndpointRule = (e: CatalogEndpoint) => string | undefined;

/** A model's ZDR vendor, by its id prefix (gaps-filled.md). */
export function zdrVendorOf(modelId: string): ZdrVendor {
  const prefix = modelId.slice(0, modelId.indexOf("/") + 1);
  switch (prefix) {
    case "anthropic/":
      return "anthropic";
    case "openai/":
      return "openai";
    case "google/":
      return "google";
    case "x-ai/":
      return "xai";
    default:
      return "other";
  }
}

function names(gs: GoverningGuardrail[], pick: (g: GoverningGuardrail) => boolean): string {
  const hit = gs.filter(pick).map((g) => `"${g.guardrail.name}"`);
  return hit.length > 0 ? hit.join(", ") : "your guardrails";
}

/**
 * The guardrails whose allowed_models leave the model out. Each list is checked
 * on its own rather than through the intersected strings: two guardrails may
 * name one model by different slugs (id and alias), and both allow it.
 */
export function allowListRefusers(
  policy: EffectivePolicy,
  model: CatalogModel,
): GoverningGuardrail[] {
  const ids = [model.id, ...model.aliases];
  return policy.guardrails.filter((g) => {
    const allowed = g.guardrail.allowedModels?.values;
    return allowed !== undefined && !ids.some((id) => allowed.includes(id));
  });
}

/** The guardrail (or policy) whose model rules refuse the model (the first, in precedence order), if any. */
export function modelRefuser(policy: EffectivePolicy, model: CatalogModel): Decider | undefined {
  const ids = [model.id, ...model.aliases];
  const g =
    allowListRefusers(policy, model)[0] ??
    policy.guardrails.find((g) => ids.some((id) => g.guardrail.ignoredModels?.values.includes(id)));
  return g && deciderOf({ guardrailId: g.guardrail.id, policy: g.policy });
}

/** A policy refusal: its typed reason (for gRPC callers) and its message (for people). */
export interface PolicyRefusal {
  reason: ErrorReason;
  message: string;
}

/** Why the policy refuses a model outright (403), or undefined when it may be used. */
export function modelRefusal(
  policy: EffectivePolicy,
  model: CatalogModel,
): PolicyRefusal | undefined {
  const ids = [model.id, ...model.aliases];
  const refusers = allowListRefusers(policy, model);
  if (refusers.length > 0) {
    const by = names(refusers, () => true);
    return {
      reason: ErrorReason.MODEL_NOT_ALLOWED,
      message: `Model ${model.id} is not allowed by guardrail ${by} (allowed_models)`,
    };
  }
  if (ids.some((id) => policy.ignoredModels.has(id))) {
    const by = names(policy.guardrails, (g) =>
      ids.some((id) => g.guardrail.ignoredModels?.values.includes(id)),
    );
    return {
      reason: ErrorReason.MODEL_IGNORED,
      message: `Model ${model.id} is excluded by guardrail ${by} (ignored_models)`,
    };
  }
  return undefined;
}

/** What each of policyRules' rules is about, in their order: a replay names the rule that refused. */
export const POLICY_RULE_KINDS = [
  "provider",
  "provider",
  "zdr",
  "data_policy",
  "data_policy",
] as const;
export type PolicyRuleKind = (typeof POLICY_RULE_KINDS)[number];

/**
 * The guardrail side of endpoint routing: provider lists, zero data retention
 * per vendor, safety retention, and training/publication permissions.
 * `requestZdr` (the request's provider.zdr) can only add: a request that asks
 * for ZDR is ZDR-only too, so the policy's safety-retention settings govern it
 * (its non-ZDR endpoints are excluded by the request's own data-policy rule).
 */
export function policyRules(
  policy: EffectivePolicy,
  model: CatalogModel,
  requestZdr = false,
): EndpointRule[] {
  const vendor = zdrVendorOf(model.id);
  const enforced = policy.zdr[vendor];
  return [
    (e) =>
      policy.allowedProviders && !policy.allowedProviders.has(e.provider)
        ? "provider not in allowed_providers"
        : undefined,
    (e) => (policy.ignoredProviders.has(e.provider) ? "provider in ignored_providers" : undefined),
    (e) => {
      if (!enforced && !requestZdr) return undefined;
      if (!e.dataPolicy.zeroDataRetention)
        return enforced ? `not zero-data-retention (enforce_zdr_${vendor})` : undefined;
      const allowSafety =
        vendor === "google"
          ? policy.allowSafetyRetentionGoogle
          : vendor === "other"
            ? policy.allowSafetyRetentionOther
            : true;
      return e.dataPolicy.safetyRetention && !allowSafety
        ? `retains prompts for safety monitoring (allow_safety_retention_${vendor === "google" ? "google" : "other"})`
        : undefined;
    },
    (e) => {
      if (!e.dataPolicy.trainsOnData) return undefined;
      const free = e.pricePerMillionChars === 0;
      if (free && !policy.enableFreeModelTraining)
        return "free endpoint trains on data (enable_free_model_training)";
      if (!free && !policy.enablePaidModelTraining)
        return "paid endpoint trains on data (enable_paid_model_training)";
      return undefined;
    },
    (e) =>
      e.dataPolicy.publishesPrompts &&
      e.pricePerMillionChars === 0 &&
      !policy.enableFreeModelPublication
        ? "free endpoint publishes prompts (enable_free_model_publication)"
        : undefined,
  ];
}

/**
 * The models a policy lets its key use, each with only the endpoints the policy leaves it
 * (request-specific rules aside: capabilities and a request's own data policy depend on the
 * request). A model the policy refuses, or whose every endpoint it excludes, is left out.
 */
export function usableModels(
  policy: EffectivePolicy,
  models: readonly CatalogModel[],
): CatalogModel[] {
  return models.flatMap((model) => {
    if (modelRefusal(policy, model)) return [];
    const rules = policyRules(policy, model);
    const endpoints = model.endpoints.filter((e) => rules.every((rule) => rule(e) === undefined));
    return endpoints.length > 0 ? [{ ...model, endpoints }] : [];
  });
}
