import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { defaultCatalog } from "../../../services/speech/catalog/default-catalog.js";
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

const ZDR = {
  zero_data_retention: true,
  safety_retention: false,
  trains_on_data: false,
  publishes_prompts: false,
};
const LEAKY = {
  zero_data_retention: false,
  safety_retention: true,
  trains_on_data: true,
  publishes_prompts: false,
};

const BASE_CAPS = {
  speed: true,
  multi_speaker: false,
  instructions: false,
  voice_cloning: false,
  max_references: 0,
  image_reference: false,
};

type Caps = Partial<typeof BASE_CAPS>;

function endpoint(provider: string, caps: Caps = {}, dataPolicy = ZDR) {
  return {
    provider,
    adapter: "openai-compatible",
    price_per_million_chars: 20,
    capabilities: { ...BASE_CAPS, ...caps },
    data_policy: dataPolicy,
  };
}

const VOICES = ["alloy", "echo", "nova"];

function model(
  id: string,
  endpoints: unknown[],
  voices: string[] = VOICES,
  extra: { created?: string; aliases?: string[]; description?: string } = {},
) {
  return { id, name: id, description: `test model ${id}`, voices, endpoints, ...extra };
}

/** Publication dates of two test models (the /models `created` field, sorting and age filters). */
export const CREATED = { basic: "2024-05-01", cloneOne: "2025-01-15" };

/** Model ids of the test catalog, by what they exercise. */
export const MODELS = {
  espeak: "railgate/espeak-ng",
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
} as const;

export const DIALOGUE_VOICES = ["alice", "bob", "carol"];

/** The catalog document: every capability the routing rules look at, on fake providers. */
export function testCatalog(fakes: Fakes, deadBaseUrl: string) {
  const provider = (fake: FakeOpenAi, extra: Record<string, unknown> = {}) => ({
    adapter: "openai-compatible",
    base_url: fake.baseUrl,
    timeout_ms: 5_000,
    ...extra,
  });
  const espeak = defaultCatalog({}).models.find((m) => m.id === MODELS.espeak);
  return {
    providers: {
      acme: provider(fakes.acme, { api_key_env: "ACME_API_KEY" }),
      backup: provider(fakes.backup, { api_key_env: "BACKUP_API_KEY" }),
      dead: { adapter: "openai-compatible", base_url: deadBaseUrl, timeout_ms: 5_000 },
      broken: provider(fakes.broken),
      unavailable: provider(fakes.unavailable),
      overloaded: provider(fakes.overloaded),
      limited: provider(fakes.limited),
      hanging: provider(fakes.hanging, { timeout_ms: HANG_TIMEOUT_MS }),
      dropping: provider(fakes.dropping),
      locked: provider(fakes.locked, { api_key_env: "LOCKED_API_KEY_NOT_SET" }),
      slow: provider(fakes.slow),
    },
    models: [
      espeak,
      model(MODELS.basic, [endpoint("acme")], VOICES, {
        created: CREATED.basic,
        aliases: ["tts-basic", "acme/basic-v1"],
      }),
      model(MODELS.fixedSpeed, [endpoint("acme", { speed: false })]),
      model(
        MODELS.dialogue,
        [endpoint("acme", { multi_speaker: true, instructions: true })],
        DIALOGUE_VOICES,
      ),
      model(
        MODELS.cloneOne,
        [endpoint("acme", { voice_cloning: true, max_references: 1 })],
        VOICES,
        {
          created: CREATED.cloneOne,
        },
      ),
      model(MODELS.cloneThree, [endpoint("acme", { voice_cloning: true, max_references: 3 })]),
      model(MODELS.image, [endpoint("acme", { image_reference: true })]),
      model(MODELS.steerable, [endpoint("acme", { instructions: true })]),
      model(MODELS.leaky, [endpoint("acme", {}, LEAKY)]),
      // acme first (the preferred endpoint), but only backup is zero-data-retention.
      model(MODELS.shared, [endpoint("acme", {}, LEAKY), endpoint("backup")]),
      model(MODELS.failoverDead, [endpoint("dead"), endpoint("backup")]),
      model(MODELS.failover503, [endpoint("unavailable"), endpoint("backup")]),
      model(MODELS.broken, [endpoint("broken")]),
      model(MODELS.unavailable, [endpoint("unavailable")]),
      model(MODELS.overloaded, [endpoint("overloaded")]),
      model(MODELS.limited, [endpoint("limited")]),
      model(MODELS.hanging, [endpoint("hanging")]),
      model(MODELS.dropping, [endpoint("dropping")]),
      model(MODELS.locked, [endpoint("locked")]),
      model(MODELS.dead, [endpoint("dead")]),
      model(MODELS.slow, [endpoint("slow", { multi_speaker: true })]),
    ],
  };
}

export function writeCatalog(dir: string, fakes: Fakes, deadBaseUrl: string): string {
  const file = join(dir, "catalog.json");
  writeFileSync(file, JSON.stringify(testCatalog(fakes, deadBaseUrl), null, 2));
  return file;
}
