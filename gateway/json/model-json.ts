import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AUDIO_FORMAT_NAMES, audioFormatName } from "../../domain/audio-formats.js";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import type { Endpoint, Model } from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  arrayOf,
  BOOLEAN,
  INTEGER,
  type JsonSchema,
  NULL,
  NUMBER,
  STRING,
  STRINGS,
  shapeOf,
} from "../openapi/spec-schema.js";
import type { ModelQuery } from "./model-query.js";

/*
 * Speech models in OpenRouter's model shapes (every field @openrouter/sdk validates), with
 * Railgate's own fields beside them (voices, endpoints with capabilities and data policy).
 * Prices are per input character (the catalog's per-million-characters price / 10^6) as
 * decimal strings, OpenRouter's `prompt`; speech has no output tokens, so `completion` is "0".
 */

const DAY_MS = 86_400_000;

/** USD per unit as OpenRouter writes it: a plain decimal string ("0.000012", never "1.2e-5"). */
export function priceString(usd: number): string {
  if (usd === 0) return "0";
  return usd.toFixed(15).replace(/0+$/, "").replace(/\.$/, "");
}

/** What the model is billed at: its cheapest endpoint, per million input characters. */
export function modelPrice(m: Model): number {
  const prices = m.endpoints.map((e) => e.pricePerMillionChars);
  return prices.length ? Math.min(...prices) : 0;
}

export function createdSeconds(m: Model): number {
  return m.createdAt ? Math.floor(timestampDate(m.createdAt).getTime() / 1000) : 0;
}

/** Text always; reference audio (voice cloning) and images (voice design) where an endpoint takes them. */
function inputModalities(endpoints: Endpoint[]): string[] {
  const out = ["text"];
  if (endpoints.some((e) => e.capabilities?.voiceCloning)) out.push("audio");
  if (endpoints.some((e) => e.capabilities?.imageReference)) out.push("image");
  return out;
}

/** Speech models have no tokenizer: the model shape omits it, the endpoints shape has it null. */
function architecture(endpoints: Endpoint[]) {
  const input = inputModalities(endpoints);
  return {
    input_modalities: input,
    output_modalities: ["speech"],
    modality: `${input.join("+")}->speech`,
    instruct_type: null,
  };
}

/** The speech body fields an endpoint honours beyond input, model and voice. */
function supportedParameters(endpoints: Endpoint[]): string[] {
  const out = ["voice", "response_format"];
  if (endpoints.some((e) => e.capabilities?.speed)) out.push("speed");
  if (endpoints.some((e) => e.capabilities?.instructions)) out.push("instructions");
  if (endpoints.some((e) => e.capabilities?.voiceCloning || e.capabilities?.imageReference))
    out.push("input_references");
  return out;
}

function pricing(pricePerMillionChars: number) {
  return {
    prompt: priceString(pricePerMillionChars / 1_000_000),
    completion: "0",
    per_million_characters: pricePerMillionChars,
  };
}

function railgateEndpoint(e: Endpoint) {
  return {
    provider: e.provider,
    kind: e.kind,
    price_per_million_chars: e.pricePerMillionChars,
    byok: e.byok,
    formats: e.formats.flatMap((f) => audioFormatName(f) ?? []),
    capabilities: {
      speed: e.capabilities?.speed ?? false,
      multi_speaker: e.capabilities?.multiSpeaker ?? false,
      instructions: e.capabilities?.instructions ?? false,
      voice_cloning: e.capabilities?.voiceCloning ?? false,
      max_references: e.capabilities?.maxReferences ?? 0,
      image_reference: e.capabilities?.imageReference ?? false,
    },
    data_policy: {
      zero_data_retention: e.dataPolicy?.zeroDataRetention ?? false,
      safety_retention: e.dataPolicy?.safetyRetention ?? false,
      trains_on_data: e.dataPolicy?.trainsOnData ?? false,
      publishes_prompts: e.dataPolicy?.publishesPrompts ?? false,
    },
  };
}

/** One model (GET /models, /models/{author}/{slug}). */
export function modelToJson(m: Model) {
  return {
    id: m.id,
    // The catalog id is the permanent one; aliases are other names for it.
    canonical_slug: m.id,
    aliases: m.aliases,
    name: m.name,
    created: createdSeconds(m),
    description: m.description,
    // Speech models take characters, not a token context: the longest input one request may carry.
    context_length: SPEECH_LIMITS.maxInputChars,
    architecture: architecture(m.endpoints),
    pricing: pricing(modelPrice(m)),
    top_provider: {
      context_length: SPEECH_LIMITS.maxInputChars,
      max_completion_tokens: null,
      is_moderated: false,
    },
    per_request_limits: null,
    default_parameters: null,
    supported_parameters: supportedParameters(m.endpoints),
    supported_voices: m.voices.map((v) => v.id),
    voices: m.voices.map((v) => ({ id: v.id, name: v.name, languages: v.languages })),
    links: { details: `/api/v1/models/${m.id}/endpoints` },
    endpoints: m.endpoints.map(railgateEndpoint),
  };
}

/** One endpoint of a model as OpenRouter's PublicEndpoint, with Railgate's fields beside. */
export function endpointToJson(m: Model, e: Endpoint) {
  return {
    name: `${e.provider} | ${m.id}`,
    model_id: m.id,
    model_name: m.name,
    provider_name: e.provider,
    tag: e.provider,
    context_length: SPEECH_LIMITS.maxInputChars,
    max_completion_tokens: null,
    max_prompt_tokens: null,
    pricing: pricing(e.pricePerMillionChars),
    quantization: null,
    // 0: serving normally. Railgate keeps no latency, throughput or uptime statistics.
    status: 0,
    uptime_last_30m: null,
    uptime_last_5m: null,
    uptime_last_1d: null,
    latency_last_30m: null,
    throughput_last_30m: null,
    supported_parameters: supportedParameters([e]),
    supports_implicit_caching: false,
    supports_tool_choice: { auto: false, function: false, none: false, required: false },
    supports_voice_cloning: e.capabilities?.voiceCloning ?? false,
    ...railgateEndpoint(e),
  };
}

/** A model's endpoints (GET /models/{author}/{slug}/endpoints), OpenRouter's PublicEndpoint each. */
export function modelEndpointsToJson(m: Model) {
  return {
    id: m.id,
    name: m.name,
    created: createdSeconds(m),
    description: m.description,
    architecture: { ...architecture(m.endpoints), tokenizer: null },
    endpoints: m.endpoints.map((e) => endpointToJson(m, e)),
  };
}

/**
 * Every endpoint with zero data retention, over the whole catalog (GET /endpoints/zdr):
 * the ones a guardrail's enforce_zdr_* leaves eligible.
 */
export function zdrEndpointsToJson(models: Model[]) {
  return models.flatMap((m) =>
    m.endpoints.filter((e) => e.dataPolicy?.zeroDataRetention).map((e) => endpointToJson(m, e)),
  );
}

/** The models a query selects, in the order it asks for. */
export function selectModels(models: Model[], q: ModelQuery, now: Date): Model[] {
  const out = models.filter((m) => {
    const wanted = q.outputModalities ?? ["speech"];
    if (!wanted.includes("speech") && !wanted.includes("all")) return false;
    const input = inputModalities(m.endpoints);
    if (q.inputModalities && !q.inputModalities.every((x) => input.includes(x))) return false;
    if (q.q) {
      const text = [m.id, m.name, m.description, ...m.aliases].join("\n").toLowerCase();
      if (!text.includes(q.q)) return false;
    }
    if (q.authors && !q.authors.includes(m.id.slice(0, m.id.indexOf("/")))) return false;
    if (q.providers && !m.endpoints.some((e) => q.providers?.includes(e.provider))) return false;
    if (q.zdr && !m.endpoints.some((e) => e.dataPolicy?.zeroDataRetention)) return false;
    const params = supportedParameters(m.endpoints);
    if (q.supportedParameters && !q.supportedParameters.every((p) => params.includes(p)))
      return false;
    const price = modelPrice(m);
    if (q.minPrice !== undefined && price < q.minPrice) return false;
    if (q.maxPrice !== undefined && price > q.maxPrice) return false;
    // Speech has no output tokens: its output price is 0.
    if (q.minOutputPrice !== undefined && q.minOutputPrice > 0) return false;
    const ageDays = (now.getTime() - createdSeconds(m) * 1000) / DAY_MS;
    if (q.minAgeDays !== undefined && ageDays < q.minAgeDays) return false;
    if (q.maxAgeDays !== undefined && ageDays > q.maxAgeDays) return false;
    return true;
  });
  // Sorts by data the catalog has; the others (popularity, throughput, benchmarks) keep its order.
  if (q.sort === "newest") out.sort((a, b) => createdSeconds(b) - createdSeconds(a));
  if (q.sort === "pricing-low-to-high") out.sort((a, b) => modelPrice(a) - modelPrice(b));
  if (q.sort === "pricing-high-to-low") out.sort((a, b) => modelPrice(b) - modelPrice(a));
  return out;
}

/** By id or alias, as requests and guardrails may name it. */
export function findModel(models: Model[], id: string): Model | undefined {
  return models.find((m) => m.id === id) ?? models.find((m) => m.aliases.includes(id));
}

type Item<L> = L extends readonly (infer T)[] ? T : never;
type ModelJson = ReturnType<typeof modelToJson>;
type EndpointsJson = ReturnType<typeof modelEndpointsToJson>;

/*
 * The schemas of what the renderers above return; shapeOf makes a field added to a renderer
 * without its schema here a compile error.
 */
const PRICE: JsonSchema = { type: "string", pattern: "^\\d+(\\.\\d+)?$" };
const CONTEXT_LENGTH: JsonSchema = { const: SPEECH_LIMITS.maxInputChars };

const ARCHITECTURE = {
  input_modalities: STRINGS,
  output_modalities: STRINGS,
  modality: STRING,
  instruct_type: NULL,
} satisfies { [K in keyof ReturnType<typeof architecture>]-?: JsonSchema };

const PRICING: JsonSchema = shapeOf<ReturnType<typeof pricing>>({
  prompt: PRICE,
  completion: PRICE,
  per_million_characters: NUMBER,
});

const RAILGATE_ENDPOINT = {
  provider: STRING,
  kind: STRING,
  price_per_million_chars: NUMBER,
  byok: BOOLEAN,
  formats: arrayOf({ enum: [...AUDIO_FORMAT_NAMES] }),
  capabilities: shapeOf<ReturnType<typeof railgateEndpoint>["capabilities"]>({
    speed: BOOLEAN,
    multi_speaker: BOOLEAN,
    instructions: BOOLEAN,
    voice_cloning: BOOLEAN,
    max_references: INTEGER,
    image_reference: BOOLEAN,
  }),
  data_policy: shapeOf<ReturnType<typeof railgateEndpoint>["data_policy"]>({
    zero_data_retention: BOOLEAN,
    safety_retention: BOOLEAN,
    trains_on_data: BOOLEAN,
    publishes_prompts: BOOLEAN,
  }),
} satisfies { [K in keyof ReturnType<typeof railgateEndpoint>]-?: JsonSchema };

export const MODEL_JSON_SCHEMA: JsonSchema = shapeOf<ModelJson>({
  id: STRING,
  canonical_slug: STRING,
  aliases: STRINGS,
  name: STRING,
  created: INTEGER,
  description: STRING,
  context_length: CONTEXT_LENGTH,
  architecture: shapeOf<ModelJson["architecture"]>(ARCHITECTURE),
  pricing: PRICING,
  top_provider: shapeOf<ModelJson["top_provider"]>({
    context_length: CONTEXT_LENGTH,
    max_completion_tokens: NULL,
    is_moderated: BOOLEAN,
  }),
  per_request_limits: NULL,
  default_parameters: NULL,
  supported_parameters: STRINGS,
  supported_voices: STRINGS,
  voices: arrayOf(
    shapeOf<Item<ModelJson["voices"]>>({ id: STRING, name: STRING, languages: STRINGS }),
  ),
  links: shapeOf<ModelJson["links"]>({ details: STRING }),
  endpoints: arrayOf(shapeOf<Item<ModelJson["endpoints"]>>(RAILGATE_ENDPOINT)),
});

type EndpointJson = ReturnType<typeof endpointToJson>;

export const PUBLIC_ENDPOINT_JSON_SCHEMA: JsonSchema = shapeOf<EndpointJson>({
  name: STRING,
  model_id: STRING,
  model_name: STRING,
  provider_name: STRING,
  tag: STRING,
  context_length: CONTEXT_LENGTH,
  max_completion_tokens: NULL,
  max_prompt_tokens: NULL,
  pricing: PRICING,
  quantization: NULL,
  status: INTEGER,
  uptime_last_30m: NULL,
  uptime_last_5m: NULL,
  uptime_last_1d: NULL,
  latency_last_30m: NULL,
  throughput_last_30m: NULL,
  supported_parameters: STRINGS,
  supports_implicit_caching: BOOLEAN,
  supports_tool_choice: shapeOf<EndpointJson["supports_tool_choice"]>({
    auto: BOOLEAN,
    function: BOOLEAN,
    none: BOOLEAN,
    required: BOOLEAN,
  }),
  supports_voice_cloning: BOOLEAN,
  ...RAILGATE_ENDPOINT,
});

export const MODEL_ENDPOINTS_JSON_SCHEMA: JsonSchema = shapeOf<EndpointsJson>({
  id: STRING,
  name: STRING,
  created: INTEGER,
  description: STRING,
  architecture: shapeOf<EndpointsJson["architecture"]>({ ...ARCHITECTURE, tokenizer: NULL }),
  endpoints: arrayOf(PUBLIC_ENDPOINT_JSON_SCHEMA),
});
