import { AUDIO_FORMAT_NAMES } from "../../../domain/audio-formats.js";
import type { CatalogSource } from "../../../domain/catalog/types.js";

/*
 * The built-in catalog, written as a catalog file is (docs/configuration.md "Model catalog"): the loader checks
 * it and builds the catalog from it like any other, and tests write its entries into theirs.
 */

/** The embedded engine: offline, nothing leaves the process, so it retains and trains on nothing. */
const ESPEAK_MODEL = {
  id: "railgate/espeak-ng",
  aliases: ["espeak-ng", "railgate/espeak"],
  name: "eSpeak NG (embedded)",
  description:
    "eSpeak NG compiled to WebAssembly, running in-process: offline, fast, many languages, robotic but clear.",
  voices: "engine",
  endpoints: [
    {
      provider: "railgate",
      adapter: "espeak",
      // Non-zero by default so budgets and credits work out of the box; operators may set 0.
      price_per_million_chars: 1,
      capabilities: {
        speed: true,
        multi_speaker: true,
        instructions: false,
        voice_cloning: false,
        max_references: 0,
        image_reference: false,
      },
      data_policy: {
        zero_data_retention: true,
        safety_retention: false,
        trains_on_data: false,
        publishes_prompts: false,
      },
      byok: false,
      // MP3 and PCM from its workers, WAV behind a header, Opus, AAC and FLAC from its PCM.
      formats: [...AUDIO_FORMAT_NAMES],
    },
  ],
};

const OPENAI_VOICES = [
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "fable",
  "nova",
  "onyx",
  "sage",
  "shimmer",
  "verse",
].map((id) => ({ id, name: id[0]?.toUpperCase() + id.slice(1), languages: ["en"] }));

const OPENAI_POLICY = {
  zero_data_retention: false,
  safety_retention: true,
  trains_on_data: false,
  publishes_prompts: false,
};

/** OpenAI's speech models; listed only when OPENAI_API_KEY is configured. */
function openAiModels() {
  const endpoint = (instructions: boolean, price: number) => ({
    provider: "openai",
    adapter: "openai-compatible",
    price_per_million_chars: price,
    capabilities: {
      speed: true,
      multi_speaker: false,
      instructions,
      voice_cloning: false,
      max_references: 0,
      image_reference: false,
    },
    data_policy: OPENAI_POLICY,
    byok: false,
    // OpenAI's speech endpoint produces all six.
    formats: [...AUDIO_FORMAT_NAMES],
  });
  return [
    {
      id: "openai/gpt-4o-mini-tts",
      aliases: ["gpt-4o-mini-tts"],
      name: "OpenAI GPT-4o mini TTS",
      created: "2025-03-20",
      description: "OpenAI's steerable speech model (delivery instructions supported).",
      voices: OPENAI_VOICES,
      endpoints: [endpoint(true, 12)],
    },
    {
      id: "openai/tts-1",
      aliases: ["tts-1"],
      name: "OpenAI TTS-1",
      created: "2023-11-06",
      description: "OpenAI's low-latency speech model.",
      voices: OPENAI_VOICES,
      endpoints: [endpoint(false, 15)],
    },
  ];
}

/** The built-in catalog: eSpeak NG, and OpenAI's models when `openAi` is given (a key is set). */
export function defaultCatalogDocument(openAi?: CatalogSource["openAi"]) {
  const withOpenAi = openAi !== undefined;
  return {
    providers: withOpenAi
      ? {
          openai: {
            adapter: "openai-compatible",
            base_url: openAi.baseUrl || "https://api.openai.com/v1",
            api_key_env: "OPENAI_API_KEY",
            timeout_ms: 30_000,
          },
        }
      : {},
    models: withOpenAi ? [ESPEAK_MODEL, ...openAiModels()] : [ESPEAK_MODEL],
  };
}
