import createEspeakModule from "@echogarden/espeak-ng-emscripten";
import { JobInputError } from "./serve-jobs.js";

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
  /** Returns 16-bit mono PCM at ESPEAK_SAMPLE_RATE. */
  synthesize(text: string, voice: string, wordsPerMinute: number): Int16Array;
}

const GENDERS: Record<number, string> = { 1: "male", 2: "female" };

export async function loadEspeak(print: (line: string) => void): Promise<Espeak> {
  const module = await createEspeakModule({ print, printErr: print });
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

    synthesize(text, voice, wordsPerMinute) {
      // A failed set_voice silently keeps the previous voice, which would speak the wrong language.
      if (engine.set_voice(voice) !== 0) {
        throw new JobInputError(`unknown eSpeak voice: ${JSON.stringify(voice)}`);
      }
      engine.set_rate(wordsPerMinute);
      const blocks: Int16Array[] = [];
      engine.synthesize(escapeMarkup(text), (samples) => {
        if (samples.length > 0) {
          blocks.push(samples);
        }
        return false;
      });
      return concat(blocks);
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

function concat(blocks: Int16Array[]): Int16Array {
  const out = new Int16Array(blocks.reduce((total, block) => total + block.length, 0));
  let offset = 0;
  for (const block of blocks) {
    out.set(block, offset);
    offset += block.length;
  }
  return out;
}
