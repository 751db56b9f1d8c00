import type { AudioFormat } from "../../audio/format.js";
import type { EspeakVoice } from "./espeak-wasm.js";

/** Audio in a stream's format, and how much speech it carries. */
export interface EncodedAudio {
  /** 16-bit little-endian mono PCM at SAMPLE_RATE, or MP3 frames. */
  bytes: Uint8Array;
  /**
   * Samples (at SAMPLE_RATE) of speech these bytes add to the stream. An encoder may hold some
   * back for a while, but over a whole stream the sum is the exact length of the speech.
   */
  samples: number;
}

/** The work an eSpeak worker thread does. */
export type EspeakJob =
  | { type: "voices" }
  | {
      type: "synthesize";
      text: string;
      voice: string;
      wordsPerMinute: number;
      format: AudioFormat;
      /**
       * The stream whose encoder this worker keeps between its pieces (formats with state across
       * pieces, i.e. mp3; the pool's lease keeps every piece on this worker). Absent: the piece is
       * encoded on its own.
       */
      stream?: number;
      /** The stream's first piece: its first audio is sent as soon as there is any. */
      first: boolean;
      /** The stream's last piece: the encoder is flushed and dropped after it. */
      last: boolean;
    }
  /** One-way: the stream is over (finished, failed or cancelled); drop its encoder. */
  | { type: "end-stream"; stream: number };

/** Voices for a "voices" job; the rest of the audio for a "synthesize" job. */
export type EspeakJobResult = EspeakVoice[] | EncodedAudio;
