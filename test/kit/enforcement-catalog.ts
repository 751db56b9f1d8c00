import {
  builtInEspeak,
  type Caps,
  CLEAN_POLICY,
  type DataPolicy,
  ESPEAK_MODEL,
  endpoint,
  model,
  provider,
  writeCatalogFile,
} from "./catalog-entries.js";
import { FakeOpenAi } from "./fake-openai.js";

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
  espeak: ESPEAK_MODEL,
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

interface EndpointOptions {
  price?: number;
  caps?: Caps;
  policy?: Partial<DataPolicy>;
  byok?: boolean;
}

/** An endpoint on a fake: PRICE, CLEAN_POLICY (no ZDR) and not BYOK unless told. */
function fakeEndpoint(provider: ProviderId, o: EndpointOptions = {}) {
  return endpoint(provider, {
    price: o.price ?? PRICE,
    caps: o.caps,
    policy: o.policy,
    basePolicy: CLEAN_POLICY,
    byok: o.byok ?? false,
    upstreamModel: "tts",
  });
}

function enforcementModel(id: string, endpoints: unknown[], aliases: string[] = []) {
  return model(id, endpoints, {
    aliases,
    description: `enforcement ${id}`,
    voices: ["alloy", "echo"],
  });
}

export function makeFakes(): Fakes {
  const fakes = {} as Fakes;
  for (const p of PROVIDERS) fakes[p] = new FakeOpenAi({ chunks: 2, chunkDelayMs: 0 });
  return fakes;
}

export function enforcementCatalog(fakes: Fakes) {
  const espeak = builtInEspeak();
  if (espeak.endpoints[0]?.price_per_million_chars !== ESPEAK_PRICE)
    throw new Error("the built-in espeak entry changed: update ESPEAK_PRICE");
  const providers = Object.fromEntries(
    PROVIDERS.map((p) => [p, provider(fakes[p].baseUrl, { timeout_ms: 10_000 })]),
  );
  return {
    providers,
    models: [
      espeak,
      enforcementModel(
        MODELS.openai,
        [
          fakeEndpoint("oai-retaining"),
          fakeEndpoint("oai-zdr", { price: ZDR_PRICE, policy: { zero_data_retention: true } }),
        ],
        [MODELS.openaiAlias],
      ),
      enforcementModel(MODELS.google, [
        fakeEndpoint("google-safety", {
          policy: { zero_data_retention: true, safety_retention: true },
        }),
      ]),
      enforcementModel(MODELS.freeTrainer, [
        fakeEndpoint("free-trainer", { price: 0, policy: { trains_on_data: true } }),
      ]),
      enforcementModel(MODELS.paidTrainer, [
        fakeEndpoint("paid-trainer", { policy: { trains_on_data: true } }),
      ]),
      enforcementModel(MODELS.freePublisher, [
        fakeEndpoint("free-publisher", { price: 0, policy: { publishes_prompts: true } }),
      ]),
      enforcementModel(MODELS.byok, [fakeEndpoint("byok-provider", { byok: true })]),
      enforcementModel(MODELS.steerable, [
        fakeEndpoint("steer", { caps: { multi_speaker: true, instructions: true } }),
      ]),
      enforcementModel(MODELS.clone, [
        fakeEndpoint("clone", { caps: { voice_cloning: true, max_references: 1 } }),
      ]),
      enforcementModel(MODELS.fast, [
        fakeEndpoint("fast", { policy: { zero_data_retention: true } }),
      ]),
    ],
  };
}

export function writeCatalog(dir: string, fakes: Fakes): string {
  return writeCatalogFile(dir, enforcementCatalog(fakes));
}
