import {
  chunkBytes,
  createAudioEncoder,
  encodeContainer,
  isContainerFormat,
  MAX_CHUNK_BYTES,
  Mp3Duration,
  type ResponseFormat,
  SAMPLE_RATE,
  type SourceFormat,
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
 * encoding PCM incrementally as it arrives (Opus, AAC and FLAC through their
 * container encoders), in pieces of at most 64 KiB.
 * WAV is the adapter's PCM (it was asked for PCM) behind a streaming header.
 */
export function audioBytes(
  output: AdapterOutput,
  requested: ResponseFormat,
  tally: AudioTally,
): AsyncGenerator<Uint8Array> {
  const bytes = encodedBytes(output, sourceFormat(requested), tally);
  // No generator around the bytes unless there is a header to add: each layer costs every chunk.
  return requested === "wav" ? withWavHeader(bytes, tally) : bytes;
}

async function* withWavHeader(
  bytes: AsyncGenerator<Uint8Array>,
  tally: AudioTally,
): AsyncGenerator<Uint8Array> {
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

/** Counts the seconds of PCM on its way to an encoder. */
async function* counted(samples: AsyncIterable<Int16Array>, tally: AudioTally) {
  for await (const piece of samples) {
    tally.seconds += piece.length / SAMPLE_RATE;
    yield piece;
  }
}

async function* encodedBytes(
  output: AdapterOutput,
  format: SourceFormat,
  tally: AudioTally,
): AsyncGenerator<Uint8Array> {
  if (output.kind === "pcm" && isContainerFormat(format)) {
    for await (const bytes of encodeContainer(format, counted(output.samples, tally))) {
      for (const piece of chunkBytes(bytes)) {
        tally.bytes += piece.byteLength;
        yield piece;
      }
    }
    return;
  }
  if (output.kind === "pcm") {
    if (format !== "mp3" && format !== "pcm") throw new RangeError(`cannot encode ${format}`);
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
  // Upstream PCM is 16-bit mono at 24 kHz, so its length tells the duration; MP3 tells by its
  // frames. An upstream's Opus, AAC or FLAC is relayed unmeasured: its record has no duration.
  const exact = output.seconds;
  const mp3 = format === "mp3" && !exact ? new Mp3Duration() : undefined;
  for await (const bytes of output.bytes) {
    if (exact) {
      tally.seconds = exact();
    } else if (mp3) {
      mp3.push(bytes);
      tally.seconds = mp3.seconds;
    } else if (format === "pcm") {
      tally.seconds += bytes.byteLength / 2 / SAMPLE_RATE;
    }
    tally.bytes += bytes.byteLength;
    // Relayed as received (no copy, no splitting) unless larger than a message may be.
    if (bytes.byteLength <= MAX_CHUNK_BYTES) yield bytes;
    else yield* chunkBytes(bytes);
  }
}
