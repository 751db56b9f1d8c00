import {
  type AudioFormat,
  chunkBytes,
  createAudioEncoder,
  Mp3Duration,
  type ResponseFormat,
  SAMPLE_RATE,
  sourceFormat,
  wavStreamHeader,
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
 * WAV is the adapter's PCM (it was asked for PCM) behind a streaming header.
 */
export async function* audioBytes(
  output: AdapterOutput,
  requested: ResponseFormat,
  tally: AudioTally,
): AsyncGenerator<Uint8Array> {
  const bytes = encodedBytes(output, sourceFormat(requested), tally);
  if (requested !== "wav") {
    yield* bytes;
    return;
  }
  // The header rides with the first audio rather than ahead of it: the stream counts as
  // started (no more fail-over to another endpoint) only once the endpoint delivered audio.
  let header: Uint8Array | undefined = wavStreamHeader();
  tally.bytes += header.byteLength;
  for await (const piece of bytes) {
    if (header) {
      const joined = new Uint8Array(header.byteLength + piece.byteLength);
      joined.set(header);
      joined.set(piece, header.byteLength);
      header = undefined;
      yield joined;
    } else {
      yield piece;
    }
  }
  // Speech with no audio at all is still a valid (empty) WAV stream.
  if (header) yield header;
}

async function* encodedBytes(
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
