import { registerAacEncoder } from "@mediabunny/aac-encoder";
import { registerFlacEncoder } from "@mediabunny/flac-encoder";
import {
  AdtsOutputFormat,
  AppendOnlyStreamTarget,
  AudioSample,
  AudioSampleSource,
  FlacOutputFormat,
  OggOutputFormat,
  Output,
  type OutputFormat,
  QUALITY_MEDIUM,
  registerEncoder,
} from "mediabunny";
import { type ContainerFormat, SAMPLE_RATE } from "./format.js";
import { OpusPacketEncoder } from "./opus-packet-encoder.js";

// Node has no WebCodecs encoders: Mediabunny's own WebAssembly builds of FFmpeg's AAC encoder and
// of libFLAC (each runs in a worker thread of its own), and libopus for Opus.
registerAacEncoder();
registerFlacEncoder();
registerEncoder(OpusPacketEncoder);

/**
 * An Ogg page is closed after this much audio rather than at Mediabunny's default 8 KiB (about
 * 2 s of speech at 32 kbps): the listener hears the first words that much sooner.
 */
const OGG_PAGE_SECONDS = 0.1;

function outputFormat(format: ContainerFormat): OutputFormat {
  switch (format) {
    case "opus":
      return new OggOutputFormat({ maximumPageDuration: OGG_PAGE_SECONDS });
    case "aac":
      return new AdtsOutputFormat();
    case "flac":
      // A stream cannot seek back to finish STREAMINFO: it says "length unknown", as a live FLAC does.
      return new FlacOutputFormat({ appendOnly: true });
    default:
      throw new RangeError(`not a container format: ${String(format satisfies never)}`);
  }
}

/**
 * Encodes a stream of 16-bit mono PCM at SAMPLE_RATE into `format` (Ogg Opus, ADTS AAC or FLAC)
 * as it arrives, yielding the container's bytes as the muxer writes them. Every container here
 * is written front to back, so the bytes stream out without waiting for the end. The PCM is
 * pulled only once the bytes of the last piece were taken: a slow listener slows the engine.
 */
export async function* encodeContainer(
  format: ContainerFormat,
  pcm: AsyncIterable<Int16Array>,
): AsyncGenerator<Uint8Array> {
  const queue: Uint8Array[] = [];
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  let finished = false;
  let failure: { error: unknown } | undefined;
  let stopped = false;
  const notify = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };

  const output = new Output({
    format: outputFormat(format),
    target: new AppendOnlyStreamTarget(
      new WritableStream<Uint8Array>({
        write(chunk) {
          queue.push(chunk);
          notify();
        },
      }),
    ),
  });
  const source = new AudioSampleSource({
    codec: format,
    quality: QUALITY_MEDIUM,
    // OpenAI's FLAC is 16-bit; the samples already are, this keeps the encoder from widening them.
    transform: format === "flac" ? { sampleFormat: "s16" } : undefined,
  });
  output.addAudioTrack(source);

  const pump = async () => {
    await output.start();
    let samplesIn = 0;
    for await (const samples of pcm) {
      if (stopped) return;
      if (samples.length === 0) continue;
      const sample = new AudioSample({
        data: samples,
        format: "s16",
        numberOfChannels: 1,
        sampleRate: SAMPLE_RATE,
        timestamp: samplesIn / SAMPLE_RATE,
      });
      samplesIn += samples.length;
      try {
        await source.add(sample);
      } finally {
        sample.close();
      }
      if (queue.length > 0 && !stopped) {
        await new Promise<void>((resolve) => {
          drained = resolve;
        });
      }
    }
    if (stopped) return;
    // The muxers refuse to finish a file without a packet: no speech is an empty body.
    if (samplesIn === 0) await output.cancel();
    else await output.finalize();
  };
  pump().then(
    () => {
      finished = true;
      notify();
    },
    (error: unknown) => {
      failure = { error };
      notify();
    },
  );

  try {
    for (;;) {
      const bytes = queue.shift();
      if (bytes) {
        yield bytes;
        continue;
      }
      if (failure) throw failure.error;
      if (finished) return;
      const release = drained;
      drained = undefined;
      release?.();
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    if (!finished && !failure) {
      stopped = true;
      drained?.();
      // Frees the encoder (and its worker thread) of a stream the listener left.
      await output.cancel().catch(() => {});
    }
  }
}
