import type { EffectivePolicy, GoverningGuardrail, ZdrVendor } from "../policy/types.js";
import type { CatalogEndpoint, CatalogModel } from "./catalog/types.js";

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

/** Why the policy refuses a model outright (403), or undefined when it may be used. */
export function modelRefusal(policy: EffectivePolicy, model: CatalogModel): string | undefined {
  const ids = [model.id, ...model.aliases];
  if (policy.allowedModels && !ids.some((id) => policy.allowedModels?.has(id))) {
    const by = names(policy.guardrails, (g) => Boolean(g.guardrail.allowedModels));
    return `Model ${model.id} is not allowed by guardrail ${by} (allowed_models)`;
  }
  if (ids.some((id) => policy.ignoredModels.has(id))) {
    const by = names(policy.guardrails, (g) =>
      ids.some((id) => g.guardrail.ignoredModels?.values.includes(id)),
    );
    return `Model ${model.id} is excluded by guardrail ${by} (ignored_models)`;
  }
  return undefined;
}

/**
 * The guardrail side of endpoint routing: provider lists, zero data retention
 * per vendor (plus the request's own provider.zdr, which can only add),
 * safety retention, and training/publication permissions.
 */
export function policyRules(policy: EffectivePolicy, model: CatalogModel): EndpointRule[] {
  const vendor = zdrVendorOf(model.id);
  return [
    (e) =>
      policy.allowedProviders && !policy.allowedProviders.has(e.provider)
        ? "provider not in allowed_providers"
        : undefined,
    (e) => (policy.ignoredProviders.has(e.provider) ? "provider in ignored_providers" : undefined),
    (e) => {
      if (!policy.zdr[vendor]) return undefined;
      if (!e.data_policy.zero_data_retention)
        return `not zero-data-retention (enforce_zdr_${vendor})`;
      const allowSafety =
        vendor === "google"
          ? policy.allowSafetyRetentionGoogle
          : vendor === "other"
            ? policy.allowSafetyRetentionOther
            : true;
      return e.data_policy.safety_retention && !allowSafety
        ? `retains prompts for safety monitoring (allow_safety_retention_${vendor === "google" ? "google" : "other"})`
        : undefined;
    },
    (e) => {
      if (!e.data_policy.trains_on_data) return undefined;
      const free = e.price_per_million_chars === 0;
      if (free && !policy.enableFreeModelTraining)
        return "free endpoint trains on data (enable_free_model_training)";
      if (!free && !policy.enablePaidModelTraining)
        return "paid endpoint trains on data (enable_paid_model_training)";
      return undefined;
    },
    (e) =>
      e.data_policy.publishes_prompts &&
      e.price_per_million_chars === 0 &&
      !policy.enableFreeModelPublication
        ? "free endpoint publishes prompts (enable_free_model_publication)"
        : undefined,
  ];
}
