import { open } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { JobInputError } from "./serve-jobs.js";

/**
 * The package is GPL-3.0 and optional (an image built with WITH_ESPEAK=false leaves it out): it is
 * loaded only when an engine starts, so every module here stays importable without it.
 */
export const ESPEAK_PACKAGE = "@echogarden/espeak-ng-emscripten";

/** The rate eSpeak NG synthesizes at; the wasm build cannot change it. */
export const ESPEAK_SAMPLE_RATE = 22050;

export interface EspeakVoice {
  /** eSpeak's voice identifier, e.g. "gmw/en-US"; exactly what `set_voice` accepts. */
  id: string;
  name: string;
  /** Language tags in eSpeak's order, e.g. ["en-us", "en"]. */
  languages: string[];
  gender?: string;
}

/** One loaded instance of eSpeak NG; synchronous, so it belongs in a worker thread. */
export interface Espeak {
  voices(): EspeakVoice[];
  /**
   * Synthesizes `text`, handing `onBlock` 16-bit mono PCM at ESPEAK_SAMPLE_RATE block by block
   * (about 0.1 s each) as it goes; `onBlock` returning true stops early.
   */
  synthesize(
    text: string,
    voice: string,
    wordsPerMinute: number,
    onBlock: (samples: Int16Array) => boolean,
  ): void;
}

const GENDERS: Record<number, string> = { 1: "male", 2: "female" };

/**
 * eSpeak's voices and dictionaries (24 MB, read-only) in a SharedArrayBuffer, read once per
 * process: every worker's eSpeak serves its files from these same bytes instead of holding a copy.
 */
export async function readEspeakData(): Promise<SharedArrayBuffer> {
  const path = fileURLToPath(new URL("espeak-ng.data", import.meta.resolve(ESPEAK_PACKAGE)));
  const file = await open(path);
  try {
    const { size } = await file.stat();
    const shared = new SharedArrayBuffer(size);
    const bytes = new Uint8Array(shared);
    for (let at = 0; at < size; ) {
      const { bytesRead } = await file.read(bytes, at, size - at, at);
      if (bytesRead === 0) throw new Error(`${path} ended after ${at} of ${size} bytes`);
      at += bytesRead;
    }
    return shared;
  } finally {
    await file.close();
  }
}

/** `data`: from readEspeakData; without it this instance reads (and holds) its own copy. */
export async function loadEspeak(
  print: (line: string) => void,
  data?: SharedArrayBuffer,
): Promise<Espeak> {
  const { default: createEspeakModule } = await import("@echogarden/espeak-ng-emscripten");
  const module = await createEspeakModule({
    print,
    printErr: print,
    getPreloadedPackage: (_name, size) => {
      if (data === undefined || data.byteLength !== size) return null;
      // Emscripten's loader only checks the constructor's name; its file system then serves
      // subarrays of these bytes, read-only, which works as well on shared memory.
      Object.defineProperty(data, "constructor", { value: ArrayBuffer });
      return data as unknown as ArrayBuffer;
    },
  });
  const engine = new module.eSpeakNGWorker();
  const sampleRate = engine.get_samplerate();
  if (sampleRate !== ESPEAK_SAMPLE_RATE) {
    throw new Error(`eSpeak NG reports ${sampleRate} Hz, expected ${ESPEAK_SAMPLE_RATE} Hz`);
  }

  return {
    voices: () =>
      engine.list_voices().map((voice, index) => ({
        id: voice.identifier,
        name: voice.name,
        languages: voice.languages.map((language) => language.name),
        gender: GENDERS[engine.get_voices(index).get_gender()],
      })),

    synthesize(text, voice, wordsPerMinute, onBlock) {
      // A failed set_voice silently keeps the previous voice, which would speak the wrong language.
      if (engine.set_voice(voice) !== 0) {
        throw new JobInputError(`unknown eSpeak voice: ${JSON.stringify(voice)}`);
      }
      engine.set_rate(wordsPerMinute);
      engine.synthesize(escapeMarkup(text), (samples) =>
        samples.length > 0 ? onBlock(samples) : false,
      );
    },
  };
}

/**
 * This build parses its input as SSML, so user text could otherwise smuggle in markup such as
 * <break time="1000s"/> or a voice switch. NUL would end the C string early.
 */
function escapeMarkup(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll("\0", " ");
}
