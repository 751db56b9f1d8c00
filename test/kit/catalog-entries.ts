import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCatalogDocument } from "../../services/speech/catalog/default-catalog.js";

/**
 * Building blocks of the speech catalogs the suites and the bench write: every
 * test catalog is the built-in eSpeak entry plus fake OpenAI-compatible
 * providers, so they share the endpoint and model shapes here.
 */

export const ESPEAK_MODEL = "railgate/espeak-ng";

/** No capability beyond speed: each model turns on what it exercises. */
export const BASE_CAPS = {
  speed: true,
  multi_speaker: false,
  instructions: false,
  voice_cloning: false,
  max_references: 0,
  image_reference: false,
};
export type Caps = Partial<typeof BASE_CAPS>;

/** Retains nothing, trains on nothing, publishes nothing. */
export const ZDR_POLICY = {
  zero_data_retention: true,
  safety_retention: false,
  trains_on_data: false,
  publishes_prompts: false,
};
/** Like ZDR_POLICY without the zero-data-retention promise. */
export const CLEAN_POLICY = { ...ZDR_POLICY, zero_data_retention: false };
export type DataPolicy = typeof ZDR_POLICY;

export interface EndpointOptions {
  price: number;
  caps?: Caps;
  policy?: Partial<DataPolicy>;
  /** Base policy the `policy` fields override (default ZDR_POLICY). */
  basePolicy?: DataPolicy;
  byok?: boolean;
  upstreamModel?: string;
}

export function endpoint(provider: string, o: EndpointOptions) {
  return {
    provider,
    adapter: "openai-compatible",
    ...(o.upstreamModel === undefined ? {} : { upstream_model: o.upstreamModel }),
    price_per_million_chars: o.price,
    capabilities: { ...BASE_CAPS, ...o.caps },
    data_policy: { ...(o.basePolicy ?? ZDR_POLICY), ...o.policy },
    ...(o.byok === undefined ? {} : { byok: o.byok }),
  };
}

export function model(
  id: string,
  endpoints: unknown[],
  extra: {
    voices: string[];
    name?: string;
    description: string;
    aliases?: string[];
    created?: string;
  },
) {
  const { voices, name = id, ...rest } = extra;
  return { id, name, voices, endpoints, ...rest };
}

/** An OpenAI-compatible provider entry at `baseUrl`. */
export function provider(baseUrl: string, extra: Record<string, unknown> = {}) {
  return { adapter: "openai-compatible", base_url: baseUrl, ...extra };
}

/** The built-in eSpeak NG model, exactly as shipped. */
export function builtInEspeak() {
  const espeak = defaultCatalogDocument().models.find((m) => m.id === ESPEAK_MODEL);
  if (!espeak) throw new Error(`the default catalog has no ${ESPEAK_MODEL}`);
  return espeak;
}

/** Writes the catalog document as `catalog.json` in `dir`; returns its path. */
export function writeCatalogFile(dir: string, catalog: unknown): string {
  const file = join(dir, "catalog.json");
  writeFileSync(file, JSON.stringify(catalog, null, 2));
  return file;
}
