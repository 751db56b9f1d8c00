import { AUDIO_FORMAT_NAMES, audioFormatName } from "../../domain/audio-formats.js";
import {
  FILTER_ACTIONS,
  GENERATION_STATUSES,
  ROUTING_OUTCOMES,
  regionName,
} from "../../domain/enums.js";
import {
  type Generation,
  GenerationStatus,
  type RoutingStep,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  NULL,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { isoOrNull } from "./proto-json.js";
import { BUDGET_REFUSAL_SCHEMA, budgetRefusalToJson, refusalSummary } from "./refusal-json.js";

/**
 * Every endpoint of the model and what routing did with it: "served", "failed" (each attempt
 * failed before its first byte: the last one's reason and upstream status), "skipped" (breaker
 * open, a guardrail's rule, provider.ignore, over provider.max_price, a capability...) or
 * "not_tried". Records from before routing was recorded have an empty list.
 */
export function routingToJson(steps: readonly RoutingStep[]) {
  return steps.map((s) => ({
    provider: s.provider,
    // Every step is written with an outcome; null only for a value this build has no name for.
    outcome: ROUTING_OUTCOMES.name(s.outcome) ?? null,
    reason: s.reason || null,
    attempts: s.attempts,
    status: s.status || null,
  }));
}

export const ROUTING_SCHEMA = arrayOf(
  shapeOf<ReturnType<typeof routingToJson>[number]>({
    provider: STRING,
    outcome: orNull({ enum: ROUTING_OUTCOMES.names }),
    reason: orNull(STRING),
    attempts: INTEGER,
    status: orNull(INTEGER),
  }),
);

/**
 * A generation record: Railgate's fields, and OpenRouter's generation shape beside them (the
 * fields @openrouter/sdk validates). Speech has no tokens, finish reasons of a model, app
 * attribution or web search: those are null; `usage`/`total_cost` are what it cost.
 */
const SHADOW_OUTCOMES: JsonSchema = { enum: ["allowed", "refused", "redacted", "flagged"] };

export function generationToJson(g: Generation) {
  const createdAt = isoOrNull(g.createdAt);
  // Every record is written with a status; "" only for a value this build has no name for.
  const status: string = GENERATION_STATUSES.name(g.status) ?? "";
  return {
    id: g.id,
    model: g.model,
    provider: g.provider,
    status,
    characters: g.characters,
    cost_usd: g.costUsd,
    response_format: audioFormatName(g.format) ?? "pcm",
    voice: g.voice,
    speed: g.speed,
    duration_seconds: g.durationSeconds,
    bytes: Number(g.bytes),
    time_to_first_byte_ms: g.timeToFirstByteMs,
    session_id: g.sessionId || null,
    user: g.user || null,
    trace: g.trace ?? null,
    guardrail_outcomes: g.filterOutcomes.map((f) => ({
      slug: f.slug,
      label: f.label,
      action: FILTER_ACTIONS.name(f.action) ?? "",
      count: f.count,
      guardrail_id: f.guardrailId || null,
      // Only when a guardrail policy's rule acted: an outcome keeps the shape it always had.
      ...(f.policyId ? { policy_id: f.policyId } : {}),
    })),
    // Why a refused (or failed) request produced nothing, and which guardrail decided.
    refusal_reason: g.refusalReason || null,
    // The refusal as its client read it, and in words with its figures (a budget's spend and limit).
    refusal_message: g.refusalMessage || null,
    refusal_summary: refusalSummary(g),
    budget_refusal: budgetRefusalToJson(g.budgetRefusal),
    guardrail_id: g.guardrailId || null,
    policy_id: g.policyId || null,
    // What a guardrail's shadow would have done, only where it differs from what was done.
    shadow_outcome: g.shadowOutcome
      ? {
          guardrail_id: g.shadowOutcome.guardrailId,
          policy_id: g.shadowOutcome.policyId || null,
          live: g.shadowOutcome.live,
          shadow: g.shadowOutcome.shadow,
          reason: g.shadowOutcome.reason || null,
        }
      : null,
    created_at: createdAt,
    // Records written before data_region existed have none.
    data_region: regionName(g.dataRegion) ?? null,
    routing: routingToJson(g.routing),
    // Served from the workspace's audio cache; cache_discount (OpenRouter's name) is what that
    // saved against the endpoint's price, in USD (null when not cached).
    cached: g.cached,
    cache_discount: g.cached ? g.cacheDiscount : null,
    // OpenRouter's names for the same facts.
    api_type: "tts",
    provider_name: g.provider,
    total_cost: g.costUsd,
    usage: g.costUsd,
    is_byok: g.byok,
    cancelled: g.status === GenerationStatus.CANCELLED || g.status === GenerationStatus.INTERRUPTED,
    finish_reason: status,
    native_finish_reason: status,
    latency: g.timeToFirstByteMs,
    streamed: true,
    external_user: g.user || null,
    workspace_id: g.workspaceId || null,
    // The key that made the request (its hash: the public id the keys API uses).
    key_hash: g.keyHash || null,
    origin: "",
    // What speech has no counterpart of.
    app_id: null,
    generation_time: null,
    http_referer: null,
    moderation_latency: null,
    native_tokens_cached: null,
    native_tokens_completion: null,
    native_tokens_completion_images: null,
    native_tokens_prompt: null,
    native_tokens_reasoning: null,
    num_fetches: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_media_prompt: null,
    num_search_results: null,
    preset_id: null,
    provider_responses: null,
    router: null,
    service_tier: null,
    tokens_completion: null,
    tokens_prompt: null,
    upstream_id: null,
    upstream_inference_cost: null,
    user_agent: null,
    web_search_engine: null,
  };
}

type GenerationJson = ReturnType<typeof generationToJson>;
type Item<L> = L extends readonly (infer T)[] ? T : never;
const NULLABLE_STRING = orNull(STRING);

/** What generationToJson renders; shapeOf makes a field added there without its schema a compile error. */
export const GENERATION_SCHEMA = shapeOf<GenerationJson>({
  id: STRING,
  model: STRING,
  provider: STRING,
  status: STRING,
  characters: INTEGER,
  cost_usd: NUMBER,
  response_format: { enum: [...AUDIO_FORMAT_NAMES] },
  voice: STRING,
  speed: NUMBER,
  duration_seconds: NUMBER,
  bytes: INTEGER,
  time_to_first_byte_ms: NUMBER,
  session_id: NULLABLE_STRING,
  user: NULLABLE_STRING,
  trace: { type: ["object", "null"] },
  guardrail_outcomes: arrayOf(
    withOptional(
      shapeOf<Required<Item<GenerationJson["guardrail_outcomes"]>>>({
        slug: STRING,
        label: STRING,
        action: STRING,
        count: INTEGER,
        guardrail_id: NULLABLE_STRING,
        policy_id: STRING,
      }),
      "policy_id",
    ),
  ),
  refusal_reason: NULLABLE_STRING,
  refusal_message: NULLABLE_STRING,
  refusal_summary: NULLABLE_STRING,
  budget_refusal: BUDGET_REFUSAL_SCHEMA,
  guardrail_id: NULLABLE_STRING,
  policy_id: NULLABLE_STRING,
  shadow_outcome: orNull(
    shapeOf<NonNullable<GenerationJson["shadow_outcome"]>>({
      guardrail_id: STRING,
      policy_id: NULLABLE_STRING,
      live: SHADOW_OUTCOMES,
      shadow: SHADOW_OUTCOMES,
      reason: NULLABLE_STRING,
    }),
  ),
  created_at: orNull(DATE_TIME),
  data_region: NULLABLE_STRING,
  routing: ROUTING_SCHEMA,
  cached: BOOLEAN,
  cache_discount: orNull(NUMBER),
  api_type: { const: "tts" },
  provider_name: STRING,
  total_cost: NUMBER,
  usage: NUMBER,
  is_byok: BOOLEAN,
  cancelled: BOOLEAN,
  finish_reason: STRING,
  native_finish_reason: STRING,
  latency: NUMBER,
  streamed: { const: true },
  external_user: NULLABLE_STRING,
  workspace_id: NULLABLE_STRING,
  key_hash: NULLABLE_STRING,
  origin: STRING,
  app_id: NULL,
  generation_time: NULL,
  http_referer: NULL,
  moderation_latency: NULL,
  native_tokens_cached: NULL,
  native_tokens_completion: NULL,
  native_tokens_completion_images: NULL,
  native_tokens_prompt: NULL,
  native_tokens_reasoning: NULL,
  num_fetches: NULL,
  num_input_audio_prompt: NULL,
  num_media_completion: NULL,
  num_media_prompt: NULL,
  num_search_results: NULL,
  preset_id: NULL,
  provider_responses: NULL,
  router: NULL,
  service_tier: NULL,
  tokens_completion: NULL,
  tokens_prompt: NULL,
  upstream_id: NULL,
  upstream_inference_cost: NULL,
  user_agent: NULL,
  web_search_engine: NULL,
});

/** `schema` with `field` no longer required (present only where it applies). */
function withOptional(schema: JsonSchema, field: string): JsonSchema {
  const required = (schema.required ?? []) as string[];
  return { ...schema, required: required.filter((f) => f !== field) };
}
