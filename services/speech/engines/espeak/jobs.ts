import type { EspeakVoice } from "./espeak-wasm.js";

/** The work an eSpeak worker thread does. */
export type EspeakJob =
  | { type: "voices" }
  | { type: "synthesize"; text: string; voice: string; wordsPerMinute: number };

/** Voices for a "voices" job; 16-bit mono PCM at SAMPLE_RATE for a "synthesize" job. */
export type EspeakJobResult = EspeakVoice[] | Int16Array;
