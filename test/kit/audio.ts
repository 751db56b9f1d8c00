import { MPEGDecoder } from "mpg123-decoder";
import { SAMPLE_RATE } from "../../services/speech/audio/index.js";

/** A 440 Hz tone at a third of full scale: unmistakably not silence. */
export function sineTone(seconds: number, hz = 440): Int16Array {
  const out = new Int16Array(Math.round(seconds * SAMPLE_RATE));
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.round(Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE) * 10_000);
  }
  return out;
}

/** A short WAV clip (what a client would send as a voice-cloning reference). */
export function wavBytes(seconds = 0.2): Buffer {
  const samples = sineTone(seconds);
  const data = Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVE", 8);
  header.write("fmt ", 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

export function wavDataUrl(seconds = 0.2): string {
  return `data:audio/wav;base64,${wavBytes(seconds).toString("base64")}`;
}

/** A 1x1 PNG as a data URL (an image reference for voice design). */
export const PNG_DATA_URL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** 16-bit little-endian PCM bytes as samples (copied, so any alignment works). */
export function pcmSamples(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(Math.floor(bytes.byteLength / 2));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(i * 2, true);
  return out;
}

/** Root mean square on a 0..1 scale. */
export function rms(samples: ArrayLike<number>, fullScale = 1): number {
  if (samples.length === 0) return 0;
  let sum = 0;
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i] / fullScale;
    sum += v * v;
  }
  return Math.sqrt(sum / samples.length);
}

export function pcmSeconds(bytes: Uint8Array): number {
  return bytes.byteLength / 2 / SAMPLE_RATE;
}

export interface DecodedMp3 {
  sampleRate: number;
  samples: Float32Array;
  seconds: number;
  errors: number;
}

/** Decodes a whole MP3 stream with mpg123 (WebAssembly): proof the bytes are real MP3. */
export async function decodeMp3(bytes: Uint8Array): Promise<DecodedMp3> {
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const out = decoder.decode(bytes);
    const samples = out.channelData[0] ?? new Float32Array(0);
    return {
      sampleRate: out.sampleRate,
      samples,
      seconds: out.samplesDecoded / out.sampleRate,
      errors: out.errors.length,
    };
  } finally {
    decoder.free();
  }
}
