import {
  BREAKER_STATES,
  BUDGET_SCOPES,
  FILTER_ACTIONS,
  GUARDRAIL_SOURCES,
  REGION_NAMES,
  RESET_INTERVALS,
  regionName,
} from "../../domain/enums.js";
import type {
  EffectivePolicy,
  ExplainResponse,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import {
  arrayOf,
  BOOLEAN,
  INTEGER,
  NUMBER,
  orNull,
  STRING,
  STRINGS,
  shapeOf,
} from "../openapi/spec-schema.js";
import { ROUTING_SCHEMA, routingToJson } from "./generation-json.js";

/**
 * The policy every governing guardrail folds into (docs/api.md, "Policy algebra"). An unset list
 * is unrestricted (null); the enums are written by their API names.
 */
function policyToJson(p: EffectivePolicy) {
  const zdr = p.enforceZdr;
  return {
    allowed_data_regions: p.allowedDataRegions
      ? p.allowedDataRegions.values.flatMap((r) => regionName(r) ?? [])
      : null,
    allowed_models: p.allowedModels ? p.allowedModels.values : null,
    allowed_providers: p.allowedProviders ? p.allowedProviders.values : null,
    ignored_models: p.ignoredModels,
    ignored_providers: p.ignoredProviders,
    enforce_zdr: {
      anthropic: zdr?.anthropic ?? false,
      openai: zdr?.openai ?? false,
      google: zdr?.google ?? false,
      xai: zdr?.xai ?? false,
      other: zdr?.other ?? false,
    },
    enable_free_model_publication: p.enableFreeModelPublication,
    enable_free_model_training: p.enableFreeModelTraining,
    enable_paid_model_training: p.enablePaidModelTraining,
    allow_safety_retention_google: p.allowSafetyRetentionGoogle,
    allow_safety_retention_other: p.allowSafetyRetentionOther,
    content_filters: p.contentFilters.map((f) => ({
      slug: f.slug,
      action: FILTER_ACTIONS.name(f.action) ?? null,
      label: f.label,
      guardrail_id: f.guardrailId,
    })),
  };
}

/**
 * Why a key's requests are allowed or refused: GET /api/v1/keys/{hash}/explain. The service
 * sets every enum; a value this build has no name for (a speech service of another version,
 * mid-rollout) is written as null rather than guessed, except where the API always had a
 * default (region: null, breaker: "closed").
 */
export function explainToJson(e: ExplainResponse) {
  return {
    key_hash: e.keyHash,
    workspace_id: e.workspaceId,
    region: regionName(e.region) ?? null,
    region_allowed: e.regionAllowed ?? null,
    guardrails: e.guardrails.map((g) => ({
      source: GUARDRAIL_SOURCES.name(g.source) ?? null,
      id: g.id,
      name: g.name,
      contributes: g.contributes,
      // A guardrail policy names its type and the guardrail it replaced; a guardrail has neither.
      policy_type: g.policyType || null,
      replaced_legacy_guardrail_ids: g.replacedLegacyGuardrailIds,
    })),
    effective_policy: e.effectivePolicy ? policyToJson(e.effectivePolicy) : null,
    budgets: e.budgets.map((b) => ({
      guardrail_id: b.guardrailId,
      guardrail_name: b.guardrailName,
      policy_id: b.policyId || null,
      limit_usd: b.limitUsd,
      reset_interval: RESET_INTERVALS.name(b.interval) ?? null,
      window: b.window,
      spent_usd: b.spentUsd,
      remaining_usd: b.remainingUsd,
      include_byok_in_budgets: b.includeByok,
      scope: BUDGET_SCOPES.name(b.scope) ?? null,
      subject: b.subject,
    })),
    credits_usd: e.creditsUsd ?? null,
    models: e.models.map((m) => ({
      model: m.model,
      allowed: m.allowed,
      reason: m.reason || null,
      endpoints: m.endpoints.map((x) => ({
        provider: x.provider,
        eligible: x.eligible,
        reason: x.reason || null,
        price_per_million_chars: x.pricePerMillionChars,
        // Live, in the speech process that answered (each replica measures its own).
        breaker: BREAKER_STATES.name(x.breaker) ?? "closed",
        consecutive_failures: x.consecutiveFailures,
        ttfb_ms: x.ttfbMs ?? null,
        throughput_bytes_per_second: x.throughputBytesPerSecond ?? null,
      })),
    })),
    // With ?generation_id=: which endpoints that request tried, and why.
    generation_id: e.generationId || null,
    routing: e.generationId ? routingToJson(e.routing) : null,
  };
}

type ExplainJson = ReturnType<typeof explainToJson>;
type PolicyJson = ReturnType<typeof policyToJson>;
type Item<L> = L extends readonly (infer T)[] ? T : never;
const NULLABLE_STRING = orNull(STRING);
const NULLABLE_STRINGS = orNull(STRINGS);

const POLICY_SCHEMA = shapeOf<PolicyJson>({
  allowed_data_regions: orNull(arrayOf({ enum: REGION_NAMES })),
  allowed_models: NULLABLE_STRINGS,
  allowed_providers: NULLABLE_STRINGS,
  ignored_models: STRINGS,
  ignored_providers: STRINGS,
  enforce_zdr: shapeOf<PolicyJson["enforce_zdr"]>({
    anthropic: BOOLEAN,
    openai: BOOLEAN,
    google: BOOLEAN,
    xai: BOOLEAN,
    other: BOOLEAN,
  }),
  enable_free_model_publication: BOOLEAN,
  enable_free_model_training: BOOLEAN,
  enable_paid_model_training: BOOLEAN,
  allow_safety_retention_google: BOOLEAN,
  allow_safety_retention_other: BOOLEAN,
  content_filters: arrayOf(
    shapeOf<Item<PolicyJson["content_filters"]>>({
      slug: STRING,
      action: orNull({ enum: FILTER_ACTIONS.names }),
      label: STRING,
      guardrail_id: STRING,
    }),
  ),
});

/** What explainToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const EXPLAIN_SCHEMA = shapeOf<ExplainJson>({
  key_hash: STRING,
  workspace_id: STRING,
  region: orNull({ enum: REGION_NAMES }),
  region_allowed: orNull(BOOLEAN),
  guardrails: arrayOf(
    shapeOf<Item<ExplainJson["guardrails"]>>({
      source: orNull({ enum: GUARDRAIL_SOURCES.names }),
      id: STRING,
      name: STRING,
      contributes: STRINGS,
      policy_type: orNull({ type: "string", enum: ["budget", "model_availability", "moderation"] }),
      replaced_legacy_guardrail_ids: STRINGS,
    }),
  ),
  effective_policy: orNull(POLICY_SCHEMA),
  budgets: arrayOf(
    shapeOf<Item<ExplainJson["budgets"]>>({
      guardrail_id: STRING,
      guardrail_name: STRING,
      policy_id: orNull(STRING),
      limit_usd: NUMBER,
      reset_interval: orNull({ enum: RESET_INTERVALS.names }),
      window: STRING,
      spent_usd: NUMBER,
      remaining_usd: NUMBER,
      include_byok_in_budgets: BOOLEAN,
      scope: orNull({ enum: BUDGET_SCOPES.names }),
      subject: STRING,
    }),
  ),
  credits_usd: orNull(NUMBER),
  models: arrayOf(
    shapeOf<Item<ExplainJson["models"]>>({
      model: STRING,
      allowed: BOOLEAN,
      reason: NULLABLE_STRING,
      endpoints: arrayOf(
        shapeOf<Item<Item<ExplainJson["models"]>["endpoints"]>>({
          provider: STRING,
          eligible: BOOLEAN,
          reason: NULLABLE_STRING,
          price_per_million_chars: NUMBER,
          breaker: { enum: BREAKER_STATES.names },
          consecutive_failures: INTEGER,
          ttfb_ms: orNull(NUMBER),
          throughput_bytes_per_second: orNull(NUMBER),
        }),
      ),
    }),
  ),
  generation_id: NULLABLE_STRING,
  routing: orNull(ROUTING_SCHEMA),
});
