import {
  type AudioFormat,
  chunkBytes,
  createAudioEncoder,
  Mp3Duration,
  SAMPLE_RATE,
} from "./audio/index.js";
import type { AdapterOutput } from "./engines/types.js";

/**
 * Engine audio bound for MP3 is encoded in slices of this many samples (0.5 s):
 * the first frames leave after half a second of audio is encoded rather than a
 * whole sentence, and the event loop is never held by one long encode. PCM
 * needs no slicing: its encoding is a copy, and fewer, larger messages cost less.
 */
const MP3_SLICE_SAMPLES = SAMPLE_RATE / 2;

export interface AudioTally {
  bytes: number;
  /** Seconds of audio produced (from the samples, or the MP3 frames of an upstream's stream). */
  seconds: number;
}

/**
 * Turns an adapter's output into response bytes in the requested format,
 * encoding PCM incrementally as it arrives, in pieces of at most 64 KiB.
 */
export async function* audioBytes(
  output: AdapterOutput,
  format: AudioFormat,
  tally: AudioTally,
): AsyncGenerator<Uint8Array> {
  if (output.kind === "pcm") {
    const encoder = await createAudioEncoder(format);
    const slice = format === "mp3" ? MP3_SLICE_SAMPLES : Number.POSITIVE_INFINITY;
    for await (const samples of output.samples) {
      tally.seconds += samples.length / SAMPLE_RATE;
      for (let at = 0; at < samples.length; at += slice) {
        const bytes = encoder.encode(samples.subarray(at, at + slice));
        for (const piece of chunkBytes(bytes)) {
          tally.bytes += piece.byteLength;
          yield piece;
        }
      }
    }
    for (const piece of chunkBytes(encoder.flush())) {
      tally.bytes += piece.byteLength;
      yield piece;
    }
    return;
  }
  // Upstream PCM is 16-bit mono at 24 kHz, so its length tells the duration; MP3 tells by its frames.
  const exact = output.seconds;
  const mp3 = format === "mp3" && !exact ? new Mp3Duration() : undefined;
  for await (const bytes of output.bytes) {
    if (exact) {
      tally.seconds = exact();
    } else if (mp3) {
      mp3.push(bytes);
      tally.seconds = mp3.seconds;
    } else {
      tally.seconds += bytes.byteLength / 2 / SAMPLE_RATE;
    }
    for (const piece of chunkBytes(bytes)) {
      tally.bytes += piece.byteLength;
      yield piece;
    }
  }
}
