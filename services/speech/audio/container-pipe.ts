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
 * One stream's muxer and encoder (Mediabunny's `Output` with one audio track), with the
 * container's bytes queued as the muxer writes them until the reader takes them.
 */
export class ContainerPipe {
  /** Bytes written by the muxer, not yet taken. */
  readonly queue: Uint8Array[] = [];
  private readonly output: Output;
  private readonly source: AudioSampleSource;
  private wake: (() => void) | undefined;
  /** Samples given to the encoder, silence included: the next sample's timestamp. */
  private samplesIn = 0;
  /** Samples of the stream's own audio. */
  private audioSamples = 0;

  constructor(format: ContainerFormat) {
    this.output = new Output({
      format: outputFormat(format),
      target: new AppendOnlyStreamTarget(
        new WritableStream<Uint8Array>({
          write: (chunk) => {
            this.queue.push(chunk);
            this.notify();
          },
        }),
      ),
    });
    this.source = new AudioSampleSource({
      codec: format,
      quality: QUALITY_MEDIUM,
      // OpenAI's FLAC is 16-bit; the samples already are, this keeps the encoder from widening them.
      transform: format === "flac" ? { sampleFormat: "s16" } : undefined,
    });
    this.output.addAudioTrack(this.source);
  }

  /** Wakes the reader waiting in `nextEvent`. */
  notify(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** Resolves at the next `notify` (bytes written, the pump finished or failed). */
  nextEvent(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.wake = resolve;
    });
  }

  /**
   * Starts the muxer and the encoder ahead of the stream (container-encoder.ts keeps one such
   * pipe per format ready): Mediabunny creates its encoder, and the AAC and FLAC encoders their
   * worker thread and WebAssembly instance, at the first sample, which costs 40-80 ms. One
   * sample of silence (42 µs at 24 kHz) is that first sample; the encoders buffer it into their
   * first frame, so no packet and no byte is written until the stream's own audio arrives.
   */
  async prime(): Promise<void> {
    await this.start();
    await this.add(new Int16Array(1));
  }

  /** Starts the muxer, unless `prime` already did. */
  async start(): Promise<void> {
    if (this.output.state === "pending") await this.output.start();
  }

  /** Encodes one piece of the stream's audio (16-bit mono at SAMPLE_RATE). */
  async addAudio(samples: Int16Array): Promise<void> {
    this.audioSamples += samples.length;
    await this.add(samples);
  }

  private async add(samples: Int16Array): Promise<void> {
    const sample = new AudioSample({
      data: samples,
      format: "s16",
      numberOfChannels: 1,
      sampleRate: SAMPLE_RATE,
      timestamp: this.samplesIn / SAMPLE_RATE,
    });
    this.samplesIn += samples.length;
    try {
      await this.source.add(sample);
    } finally {
      sample.close();
    }
  }

  /** Ends the stream: the last frames, or nothing at all for a stream without audio. */
  async finish(): Promise<void> {
    // The muxers refuse to finish a file without a packet: no speech is an empty body.
    if (this.audioSamples === 0) await this.output.cancel();
    else await this.output.finalize();
  }

  /** Frees the encoder (and its worker thread) of a stream that will not finish. */
  async cancel(): Promise<void> {
    await this.output.cancel().catch(() => {});
  }
}
