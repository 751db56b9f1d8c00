import {
  builtInEspeak,
  type Caps,
  type DataPolicy,
  ESPEAK_MODEL,
  endpoint,
  model,
  provider,
  writeCatalogFile,
  ZDR_POLICY,
} from "./catalog-entries.js";
import type { FakeOpenAi } from "./fake-openai.js";

/** The fake providers a test catalog points at, by provider id. */
export interface Fakes {
  /** Healthy, requires ACME_API_KEY: serves most capability models. */
  acme: FakeOpenAi;
  /** Healthy and zero-data-retention: the fail-over target. */
  backup: FakeOpenAi;
  broken: FakeOpenAi;
  unavailable: FakeOpenAi;
  overloaded: FakeOpenAi;
  limited: FakeOpenAi;
  hanging: FakeOpenAi;
  dropping: FakeOpenAi;
  /** Requires a key the catalog's environment does not hold. */
  locked: FakeOpenAi;
  /** A long clip in many pieces, for cancellation. */
  slow: FakeOpenAi;
}

export const ACME_KEY = "sk-acme-test-key";
export const BACKUP_KEY = "sk-backup-test-key";
/** Per-request time-out of the provider that never answers. */
export const HANG_TIMEOUT_MS = 300;

const LEAKY = {
  ...ZDR_POLICY,
  zero_data_retention: false,
  safety_retention: true,
  trains_on_data: true,
};

function fakeEndpoint(providerId: string, caps: Caps = {}, basePolicy: DataPolicy = ZDR_POLICY) {
  return endpoint(providerId, { price: 20, caps, basePolicy });
}

const VOICES = ["alloy", "echo", "nova"];

function testModel(
  id: string,
  endpoints: unknown[],
  voices: string[] = VOICES,
  extra: { created?: string; aliases?: string[] } = {},
) {
  return model(id, endpoints, { voices, description: `test model ${id}`, ...extra });
}

/** Publication dates of two test models (the /models `created` field, sorting and age filters). */
export const CREATED = { basic: "2024-05-01", cloneOne: "2025-01-15" };

/** Model ids of the test catalog, by what they exercise. */
export const MODELS = {
  espeak: ESPEAK_MODEL,
  basic: "acme/tts-basic",
  fixedSpeed: "acme/tts-fixed-speed",
  dialogue: "acme/dialogue",
  cloneOne: "acme/clone-one",
  cloneThree: "acme/clone-three",
  image: "acme/voice-design",
  steerable: "acme/steerable",
  leaky: "acme/leaky",
  shared: "multi/shared",
  failoverDead: "multi/failover-dead",
  failover503: "multi/failover-503",
  broken: "fail/broken",
  unavailable: "fail/unavailable",
  overloaded: "fail/overloaded",
  limited: "fail/limited",
  hanging: "fail/hanging",
  dropping: "fail/dropping",
  locked: "fail/locked",
  dead: "fail/dead",
  slow: "acme/slow",
  /** acme (mp3, wav, pcm: the default formats) first, then backup, which produces all six. */
  formats: "multi/formats",
} as const;

export const DIALOGUE_VOICES = ["alice", "bob", "carol"];

/** The catalog document: every capability the routing rules look at, on fake providers. */
export function testCatalog(fakes: Fakes, deadBaseUrl: string) {
  const fake = (f: FakeOpenAi, extra: Record<string, unknown> = {}) =>
    provider(f.baseUrl, { timeout_ms: 5_000, ...extra });
  const espeak = builtInEspeak();
  return {
    providers: {
      acme: fake(fakes.acme, { api_key_env: "ACME_API_KEY" }),
      backup: fake(fakes.backup, { api_key_env: "BACKUP_API_KEY" }),
      dead: provider(deadBaseUrl, { timeout_ms: 5_000 }),
      broken: fake(fakes.broken),
      unavailable: fake(fakes.unavailable),
      overloaded: fake(fakes.overloaded),
      limited: fake(fakes.limited),
      hanging: fake(fakes.hanging, { timeout_ms: HANG_TIMEOUT_MS }),
      dropping: fake(fakes.dropping),
      locked: fake(fakes.locked, { api_key_env: "LOCKED_API_KEY_NOT_SET" }),
      slow: fake(fakes.slow),
    },
    models: [
      espeak,
      testModel(MODELS.basic, [fakeEndpoint("acme")], VOICES, {
        created: CREATED.basic,
        aliases: ["tts-basic", "acme/basic-v1"],
      }),
      testModel(MODELS.fixedSpeed, [fakeEndpoint("acme", { speed: false })]),
      testModel(
        MODELS.dialogue,
        [fakeEndpoint("acme", { multi_speaker: true, instructions: true })],
        DIALOGUE_VOICES,
      ),
      testModel(
        MODELS.cloneOne,
        [fakeEndpoint("acme", { voice_cloning: true, max_references: 1 })],
        VOICES,
        {
          created: CREATED.cloneOne,
        },
      ),
      testModel(MODELS.cloneThree, [
        fakeEndpoint("acme", { voice_cloning: true, max_references: 3 }),
      ]),
      testModel(MODELS.image, [fakeEndpoint("acme", { image_reference: true })]),
      testModel(MODELS.steerable, [fakeEndpoint("acme", { instructions: true })]),
      testModel(MODELS.leaky, [fakeEndpoint("acme", {}, LEAKY)]),
      // acme first (the preferred endpoint), but only backup is zero-data-retention.
      testModel(MODELS.shared, [fakeEndpoint("acme", {}, LEAKY), fakeEndpoint("backup")]),
      testModel(MODELS.failoverDead, [fakeEndpoint("dead"), fakeEndpoint("backup")]),
      testModel(MODELS.failover503, [fakeEndpoint("unavailable"), fakeEndpoint("backup")]),
      testModel(MODELS.broken, [fakeEndpoint("broken")]),
      testModel(MODELS.unavailable, [fakeEndpoint("unavailable")]),
      testModel(MODELS.overloaded, [fakeEndpoint("overloaded")]),
      testModel(MODELS.limited, [fakeEndpoint("limited")]),
      testModel(MODELS.hanging, [fakeEndpoint("hanging")]),
      testModel(MODELS.dropping, [fakeEndpoint("dropping")]),
      testModel(MODELS.locked, [fakeEndpoint("locked")]),
      testModel(MODELS.dead, [fakeEndpoint("dead")]),
      testModel(MODELS.slow, [fakeEndpoint("slow", { multi_speaker: true })]),
      testModel(MODELS.formats, [
        fakeEndpoint("acme"),
        { ...fakeEndpoint("backup"), formats: ["mp3", "opus", "aac", "flac", "wav", "pcm"] },
      ]),
    ],
  };
}

export function writeCatalog(dir: string, fakes: Fakes, deadBaseUrl: string): string {
  return writeCatalogFile(dir, testCatalog(fakes, deadBaseUrl));
}
