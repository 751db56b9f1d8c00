import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCatalog } from "../../../services/speech/catalog/default-catalog.js";
import { FakeOpenAi } from "../../speech/support/fake-openai.js";

/**
 * One fake upstream per provider id, so a test can tell which provider served
 * a request (x-railgate-provider, and which fake recorded a body) and what
 * text reached it.
 */
export const PROVIDERS = [
  "oai-retaining",
  "oai-zdr",
  "google-safety",
  "free-trainer",
  "paid-trainer",
  "free-publisher",
  "byok-provider",
  "steer",
  "fast",
  "clone",
] as const;
export type ProviderId = (typeof PROVIDERS)[number];
export type Fakes = Record<ProviderId, FakeOpenAi>;

export const MODELS = {
  espeak: "railgate/espeak-ng",
  /** oai-retaining first (preferred), then oai-zdr: only the second is zero-data-retention. */
  openai: "openai/tts-dual",
  openaiAlias: "tts-dual",
  /** Its only endpoint is ZDR but retains prompts for safety monitoring. */
  google: "google/tts-guarded",
  freeTrainer: "acme/free-trainer",
  paidTrainer: "acme/paid-trainer",
  freePublisher: "acme/free-publisher",
  byok: "acme/byok-voice",
  /** Multi-speaker and delivery instructions. */
  steerable: "acme/steerable",
  /** Voice cloning from one reference clip with its transcript. */
  clone: "acme/clone",
  /** Cheap and quick: for many requests. */
  fast: "acme/fast",
} as const;

/** Every paid upstream endpoint costs this much per million characters. */
export const PRICE = 10;
/** The openai model's ZDR endpoint costs more: its worst case is not what the first endpoint costs. */
export const ZDR_PRICE = 20;
/** The embedded engine's price (copied from the built-in catalog). */
export const ESPEAK_PRICE = 1;

/** Micro-dollars a request of `text` costs at `price` per million characters. */
export function costMicros(text: string, price = PRICE): number {
  return [...text].length * price;
}

const CAPS = {
  speed: true,
  multi_speaker: false,
  instructions: false,
  voice_cloning: false,
  max_references: 0,
  image_reference: false,
};
const CLEAN = {
  zero_data_retention: false,
  safety_retention: false,
  trains_on_data: false,
  publishes_prompts: false,
};

interface EndpointOptions {
  price?: number;
  caps?: Partial<typeof CAPS>;
  policy?: Partial<typeof CLEAN>;
  byok?: boolean;
}

function endpoint(provider: ProviderId, o: EndpointOptions = {}) {
  return {
    provider,
    adapter: "openai-compatible",
    upstream_model: "tts",
    price_per_million_chars: o.price ?? PRICE,
    capabilities: { ...CAPS, ...o.caps },
    data_policy: { ...CLEAN, ...o.policy },
    byok: o.byok ?? false,
  };
}

function model(id: string, endpoints: unknown[], aliases: string[] = []) {
  return {
    id,
    aliases,
    name: id,
    description: `enforcement ${id}`,
    voices: ["alloy", "echo"],
    endpoints,
  };
}

export function makeFakes(): Fakes {
  const fakes = {} as Fakes;
  for (const p of PROVIDERS) fakes[p] = new FakeOpenAi({ chunks: 2, chunkDelayMs: 0 });
  return fakes;
}

export function enforcementCatalog(fakes: Fakes) {
  const espeak = defaultCatalog({}).models.find((m) => m.id === MODELS.espeak);
  if (espeak?.endpoints[0]?.price_per_million_chars !== ESPEAK_PRICE)
    throw new Error("the built-in espeak entry changed: update ESPEAK_PRICE");
  const providers = Object.fromEntries(
    PROVIDERS.map((p) => [
      p,
      { adapter: "openai-compatible", base_url: fakes[p].baseUrl, timeout_ms: 10_000 },
    ]),
  );
  return {
    providers,
    models: [
      espeak,
      model(
        MODELS.openai,
        [
          endpoint("oai-retaining"),
          endpoint("oai-zdr", { price: ZDR_PRICE, policy: { zero_data_retention: true } }),
        ],
        [MODELS.openaiAlias],
      ),
      model(MODELS.google, [
        endpoint("google-safety", {
          policy: { zero_data_retention: true, safety_retention: true },
        }),
      ]),
      model(MODELS.freeTrainer, [
        endpoint("free-trainer", { price: 0, policy: { trains_on_data: true } }),
      ]),
      model(MODELS.paidTrainer, [endpoint("paid-trainer", { policy: { trains_on_data: true } })]),
      model(MODELS.freePublisher, [
        endpoint("free-publisher", { price: 0, policy: { publishes_prompts: true } }),
      ]),
      model(MODELS.byok, [endpoint("byok-provider", { byok: true })]),
      model(MODELS.steerable, [
        endpoint("steer", { caps: { multi_speaker: true, instructions: true } }),
      ]),
      model(MODELS.clone, [
        endpoint("clone", { caps: { voice_cloning: true, max_references: 1 } }),
      ]),
      model(MODELS.fast, [endpoint("fast", { policy: { zero_data_retention: true } })]),
    ],
  };
}

export function writeCatalog(dir: string, fakes: Fakes): string {
  const file = join(dir, "catalog.json");
  writeFileSync(file, JSON.stringify(enforcementCatalog(fakes), null, 2));
  return file;
}
