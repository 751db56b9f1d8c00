import { SPEECH_LIMITS } from "../../../domain/limits.js";
import {
  type ProviderPreferences,
  ProviderSort,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import { invalidArgument } from "../../../platform/rpc/errors.js";

export type SortBy = "price" | "latency" | "throughput";

/** OpenRouter's provider routing fields of a speech request, checked. */
export interface RoutingPreferences {
  /** Providers to try first, in this order. */
  order: string[];
  /** Empty: no restriction. */
  only: string[];
  ignore: string[];
  /** false: only the ordered providers (or, without order, the first endpoint) are tried. */
  allowFallbacks: boolean;
  sort?: SortBy;
  /** USD per million characters, and USD for the whole request. */
  maxPrice: { prompt?: number; request?: number };
}

export const NO_PREFERENCES: RoutingPreferences = {
  order: [],
  only: [],
  ignore: [],
  allowFallbacks: true,
  maxPrice: {},
};

const SORTS: Record<number, SortBy | undefined> = {
  [ProviderSort.PRICE]: "price",
  [ProviderSort.LATENCY]: "latency",
  [ProviderSort.THROUGHPUT]: "throughput",
};

function providerList(field: string, values: string[]): string[] {
  const L = SPEECH_LIMITS;
  if (values.length > L.providerListMaxItems) {
    throw invalidArgument(`${field} may hold at most ${L.providerListMaxItems} provider ids`);
  }
  values.forEach((v, i) => {
    if (v.trim().length === 0 || [...v].length > L.providerSlugMax) {
      throw invalidArgument(
        `${field}[${i}] must be a provider id of 1 to ${L.providerSlugMax} characters`,
      );
    }
  });
  return values;
}

function price(field: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isFinite(value) || value < 0) {
    throw invalidArgument(`${field} must be a number of USD >= 0`);
  }
  return value;
}

/**
 * Checks the request's routing fields (the gateway checks the same rules; a direct gRPC caller
 * is held to them here). max_price.completion, .audio and .image are checked and bound nothing:
 * speech output is priced 0 (see /models), and no speech endpoint prices audio or images.
 */
export function routingPreferences(p: ProviderPreferences | undefined): RoutingPreferences {
  if (!p) return NO_PREFERENCES;
  if (p.sort !== ProviderSort.UNSPECIFIED && SORTS[p.sort] === undefined) {
    throw invalidArgument('provider.sort must be "price", "latency" or "throughput"');
  }
  const m = p.maxPrice;
  if (m) {
    price("provider.max_price.completion", m.completion);
    price("provider.max_price.audio", m.audio);
    price("provider.max_price.image", m.image);
  }
  return {
    order: providerList("provider.order", p.order),
    only: providerList("provider.only", p.only),
    ignore: providerList("provider.ignore", p.ignore),
    allowFallbacks: p.allowFallbacks ?? true,
    sort: SORTS[p.sort],
    maxPrice: {
      prompt: price("provider.max_price.prompt", m?.prompt),
      request: price("provider.max_price.request", m?.request),
    },
  };
}
