import { PAGE_LIMITS } from "../../domain/limits.js";
import { quote } from "../../platform/quote.js";
import type { JsonSchema } from "../openapi/spec-schema.js";
import { badRequest, INT32_MAX } from "./fields.js";

/**
 * The query of GET /models and /models/count: every parameter @openrouter/sdk 1.3.19 sends
 * (its GetModelsRequest), checked by type so a bad value is a 400 naming the parameter.
 * Those that describe something a speech catalog has (modalities, authors, providers,
 * prices, age, ZDR, search, sort by price or date) filter; the rest describe LLM data that
 * speech models do not have (context length, benchmarks, categories, distillation, region
 * of inference) and are accepted and ignored, so SDK calls that pass them still work.
 */
export interface ModelQuery {
  limit?: number;
  offset: number;
  outputModalities?: string[];
  inputModalities?: string[];
  q?: string;
  authors?: string[];
  providers?: string[];
  supportedParameters?: string[];
  zdr: boolean;
  minPrice?: number;
  maxPrice?: number;
  minOutputPrice?: number;
  maxOutputPrice?: number;
  minAgeDays?: number;
  maxAgeDays?: number;
  sort?: string;
}

/** The SDK's output modalities, and "all" (OpenRouter's "any modality"). */
export const OUTPUT_MODALITIES = [
  "text",
  "image",
  "embeddings",
  "audio",
  "video",
  "rerank",
  "decisions",
  "speech",
  "transcription",
  "all",
];
export const INPUT_MODALITIES = ["text", "image", "file", "audio", "video"];

const SORTS = [
  "most-popular",
  "newest",
  "top-weekly",
  "pricing-low-to-high",
  "pricing-high-to-low",
  "context-high-to-low",
  "throughput-high-to-low",
  "latency-low-to-high",
  "intelligence-high-to-low",
  "coding-high-to-low",
  "agentic-high-to-low",
  "design-arena-elo-high-to-low",
];
const CATEGORIES = [
  "programming",
  "roleplay",
  "marketing",
  "marketing/seo",
  "technology",
  "science",
  "translation",
  "legal",
  "finance",
  "health",
  "trivia",
  "academia",
];

/** min_age_days and max_age_days: up to ~270 years, past any model's age. */
const AGE_DAYS_MAX = 100_000;
const DISTILLABLE = ["true", "false"];
/** OpenRouter's region filter values. */
const MODEL_REGIONS = ["eu", "us"];
const ZDR = ["true"];

/** Accepted by type and ignored: speech models carry no such data (see above). */
const IGNORED_NUMBERS = [
  "min_intelligence_index",
  "max_intelligence_index",
  "min_coding_index",
  "max_coding_index",
  "min_agentic_index",
  "max_agentic_index",
  "min_tool_success_rate",
  "max_tool_success_rate",
];
const IGNORED_STRINGS = ["arch"];

const FILTER_PARAMS = [
  "output_modalities",
  "input_modalities",
  "q",
  "model_authors",
  "providers",
  "supported_parameters",
  "zdr",
  "min_price",
  "max_price",
  "min_output_price",
  "max_output_price",
  "min_age_days",
  "max_age_days",
  "sort",
  "category",
  "distillable",
  "region",
  "context",
  ...IGNORED_NUMBERS,
  ...IGNORED_STRINGS,
];

function int(params: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  const n = /^\d{1,10}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < min || n > max) {
    throw badRequest(`${name} must be an integer from ${min} to ${max}, got ${quote(raw)}`);
  }
  return n;
}

function num(params: URLSearchParams, name: string): number | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  const n = raw.trim() === "" ? Number.NaN : Number(raw);
  if (!Number.isFinite(n) || n < 0) {
    throw badRequest(`${name} must be a number of at least 0, got ${quote(raw)}`);
  }
  return n;
}

function oneOf(params: URLSearchParams, name: string, allowed: string[]): string | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  if (!allowed.includes(raw)) {
    throw badRequest(`${name} must be one of ${allowed.join(", ")}; got ${quote(raw)}`);
  }
  return raw;
}

/** A comma-separated list; `allowed` (when given) bounds its elements. */
function list(params: URLSearchParams, name: string, allowed?: string[]): string[] | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw badRequest(`${name} must list at least one value`);
  for (const item of items) {
    if (allowed && !allowed.includes(item)) {
      throw badRequest(`${name} values must be among ${allowed.join(", ")}; got ${quote(item)}`);
    }
  }
  return items;
}

/** A parameter given twice is ambiguous (which one filters?): refused by name. */
function checkNames(params: URLSearchParams, allowed: readonly string[]): void {
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!allowed.includes(name)) throw badRequest(`Unknown query parameter ${quote(name)}`);
    if (seen.has(name)) throw badRequest(`Query parameter ${quote(name)} is given more than once`);
    seen.add(name);
  }
}

/** The query parameters of GET /models/count and of the list (paged). */
export const MODEL_FILTER_PARAMS: readonly string[] = FILTER_PARAMS;
export const MODEL_LIST_PARAMS: readonly string[] = ["limit", "offset", ...FILTER_PARAMS];

const AT_LEAST_0 = { type: "number", minimum: 0 };
const AGE_DAYS = { type: "integer", minimum: 0, maximum: AGE_DAYS_MAX };
function commaList(allowed: readonly string[]): JsonSchema {
  return { type: "string", description: `Comma-separated, among: ${allowed.join(", ")}` };
}

/** The value rules parseModelQuery applies, for the document: the same constants. */
export const MODEL_QUERY_RULES: Record<string, JsonSchema> = {
  limit: { type: "integer", minimum: 1, maximum: PAGE_LIMITS.modelsMax },
  offset: { type: "integer", minimum: 0, maximum: INT32_MAX },
  context: { type: "integer", minimum: 0, maximum: INT32_MAX },
  category: { enum: CATEGORIES },
  distillable: { enum: DISTILLABLE },
  region: { enum: MODEL_REGIONS },
  zdr: { enum: ZDR },
  sort: { enum: SORTS },
  min_age_days: AGE_DAYS,
  max_age_days: AGE_DAYS,
  min_price: AT_LEAST_0,
  max_price: AT_LEAST_0,
  min_output_price: AT_LEAST_0,
  max_output_price: AT_LEAST_0,
  ...Object.fromEntries(IGNORED_NUMBERS.map((n) => [n, AT_LEAST_0])),
  output_modalities: commaList(OUTPUT_MODALITIES),
  input_modalities: commaList(INPUT_MODALITIES),
};

/** Parses the query of the list (paged) or of the count (`paged` false: no limit/offset). */
export function parseModelQuery(params: URLSearchParams, paged: boolean): ModelQuery {
  checkNames(params, paged ? MODEL_LIST_PARAMS : MODEL_FILTER_PARAMS);
  for (const name of IGNORED_NUMBERS) num(params, name);
  int(params, "context", 0, INT32_MAX);
  oneOf(params, "category", CATEGORIES);
  oneOf(params, "distillable", DISTILLABLE);
  oneOf(params, "region", MODEL_REGIONS);
  const minAgeDays = int(params, "min_age_days", 0, AGE_DAYS_MAX);
  const maxAgeDays = int(params, "max_age_days", 0, AGE_DAYS_MAX);
  const minPrice = num(params, "min_price");
  const maxPrice = num(params, "max_price");
  const minOutputPrice = num(params, "min_output_price");
  const maxOutputPrice = num(params, "max_output_price");
  return {
    limit: paged ? int(params, "limit", 1, PAGE_LIMITS.modelsMax) : undefined,
    offset: (paged ? int(params, "offset", 0, INT32_MAX) : undefined) ?? 0,
    outputModalities: list(params, "output_modalities", OUTPUT_MODALITIES),
    inputModalities: list(params, "input_modalities", INPUT_MODALITIES),
    q: params.get("q")?.trim().toLowerCase() || undefined,
    authors: list(params, "model_authors"),
    providers: list(params, "providers"),
    supportedParameters: list(params, "supported_parameters"),
    zdr: oneOf(params, "zdr", ZDR) === "true",
    minPrice,
    maxPrice,
    minOutputPrice,
    maxOutputPrice,
    minAgeDays,
    maxAgeDays,
    sort: oneOf(params, "sort", SORTS),
  };
}
