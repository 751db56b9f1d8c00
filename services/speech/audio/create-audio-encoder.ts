import type { AudioEncoder, AudioFormat } from "./format.js";
import { Mp3Encoder } from "./mp3-encoder.js";
import { PcmEncoder } from "./pcm-encoder.js";

export async function createAudioEncoder(format: AudioFormat): Promise<AudioEncoder> {
  switch (format) {
    case "pcm":
      return new PcmEncoder();
    case "mp3":
      return Mp3Encoder.create();
    default:
      throw new RangeError(`unsupported audio format: ${String(format satisfies never)}`);
  }
}
