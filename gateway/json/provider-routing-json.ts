import { create } from "@bufbuild/protobuf";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import {
  type MaxPrice,
  MaxPriceSchema,
  ProviderSort,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import { quote } from "../../platform/quote.js";
import type { JsonSchema } from "../openapi/spec-schema.js";
import { badRequest, checkElements, checkFields, type Spec } from "./fields.js";

type Json = Record<string, unknown>;

/**
 * OpenRouter's provider routing fields of the speech body's `provider` object (their types;
 * the service checks the rules). `sort` is a string or OpenRouter's `{ by, partition }`.
 */
export const PROVIDER_ROUTING_SPEC: Spec = {
  order: { type: "array", nullable: true },
  only: { type: "array", nullable: true },
  ignore: { type: "array", nullable: true },
  allow_fallbacks: { type: "boolean", nullable: true },
  // Its rules (a name, or { by, partition }) are in PROVIDER_ROUTING_SCHEMAS.
  sort: { type: "string", nullable: true },
  max_price: { type: "object", nullable: true },
};

const SORTS: Record<string, ProviderSort> = {
  price: ProviderSort.PRICE,
  latency: ProviderSort.LATENCY,
  throughput: ProviderSort.THROUGHPUT,
};

const MAX_PRICE_FIELDS = ["prompt", "completion", "request", "audio", "image"] as const;
/** A decimal number as OpenRouter's SDK sends prices: a string ("1.5"), or a JSON number. */
const DECIMAL = /^\d{1,15}(\.\d{1,15})?$/;

/** OpenRouter's `sort: { by, partition }` is the same as `sort: by` for one model. */
function sortName(raw: unknown): unknown {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return raw;
  checkFields(
    raw as Json,
    {
      by: { type: "string", nullable: true },
      partition: { type: "string", nullable: true, rules: { enum: ["model", "none"] } },
    },
    "provider.sort.",
  );
  const { by, partition } = raw as Json;
  if (
    partition !== undefined &&
    partition !== null &&
    partition !== "model" &&
    partition !== "none"
  )
    throw badRequest('provider.sort.partition must be "model" or "none"');
  return by;
}

function maxPrice(raw: Json): MaxPrice {
  checkFields(
    // Prices are numbers or decimal strings: their types are checked below, by name.
    Object.fromEntries(Object.keys(raw).map((k) => [k, null])),
    Object.fromEntries(MAX_PRICE_FIELDS.map((f) => [f, { type: "number", nullable: true }])),
    "provider.max_price.",
  );
  const out = create(MaxPriceSchema);
  for (const f of MAX_PRICE_FIELDS) {
    const v = raw[f];
    if (v === undefined || v === null) continue;
    const n = typeof v === "string" && DECIMAL.test(v) ? Number(v) : v;
    if (typeof n !== "number" || !Number.isFinite(n) || n < 0) {
      throw badRequest(
        `provider.max_price.${f} must be a number of USD >= 0 (or a decimal string), got ${quote(v)}`,
      );
    }
    out[f] = n;
  }
  return out;
}

function slugs(provider: Json, field: "order" | "only" | "ignore"): string[] {
  const v = provider[field] as unknown[] | null | undefined;
  if (!v) return [];
  checkElements(`provider.${field}`, v, "string");
  return v as string[];
}

/** The routing fields of `provider` (already checked against PROVIDER_ROUTING_SPEC but `sort`). */
export function providerRoutingFromJson(provider: Json) {
  const sort = sortName(provider.sort);
  if (sort !== undefined && sort !== null && (typeof sort !== "string" || !(sort in SORTS))) {
    throw badRequest(
      `provider.sort must be "price", "latency" or "throughput" (or { by: ... }), got ${quote(sort)}`,
    );
  }
  const max = provider.max_price as Json | null | undefined;
  return {
    order: slugs(provider, "order"),
    only: slugs(provider, "only"),
    ignore: slugs(provider, "ignore"),
    allowFallbacks: (provider.allow_fallbacks as boolean | null | undefined) ?? undefined,
    sort: typeof sort === "string" ? SORTS[sort] : ProviderSort.UNSPECIFIED,
    maxPrice: max ? maxPrice(max) : undefined,
  };
}

/** The same fields' OpenAPI schemas, where the spec table cannot say it (unions, items). */
const SLUGS: JsonSchema = {
  type: ["array", "null"],
  maxItems: SPEECH_LIMITS.providerListMaxItems,
  items: { type: "string", minLength: 1, maxLength: SPEECH_LIMITS.providerSlugMax },
};
const PRICE: JsonSchema = {
  oneOf: [
    { type: "number", minimum: 0 },
    { type: "string", pattern: DECIMAL.source },
  ],
};
export const PROVIDER_ROUTING_SCHEMAS: Record<string, JsonSchema> = {
  order: { ...SLUGS, description: "Providers to try first, in this order" },
  only: { ...SLUGS, description: "Only these providers may serve" },
  ignore: { ...SLUGS, description: "These providers never serve" },
  sort: {
    description:
      "Try endpoints by price, or by this process's live time to first byte (latency) or bytes/s (throughput)",
    oneOf: [
      { type: "string", enum: Object.keys(SORTS) },
      {
        type: "object",
        additionalProperties: false,
        properties: {
          by: { type: "string", enum: Object.keys(SORTS) },
          partition: { type: "string", enum: ["model", "none"] },
        },
      },
      { type: "null" },
    ],
  },
  max_price: {
    type: ["object", "null"],
    additionalProperties: false,
    description:
      "USD: prompt per million input characters, request for the whole request; speech output costs 0",
    properties: Object.fromEntries(MAX_PRICE_FIELDS.map((f) => [f, PRICE])),
  },
};
