import { Encoder } from "@evan/opus/wasm/index.mjs";
import { type AudioSample, CustomAudioEncoder, EncodedPacket } from "mediabunny";
import { SAMPLE_RATE } from "./format.js";

/** 20 ms frames: Opus's default, the usual trade between packet overhead and latency. */
const FRAME_SAMPLES = SAMPLE_RATE / 50;
/** Plenty for speech in mono at 24 kHz (OpenAI's opus is about this rate). */
const BITRATE = 32_000;
const OPUS_SET_BITRATE = 4002;
const OPUS_GET_LOOKAHEAD = 4027;

/**
 * The identification header of RFC 7845 §5.1: Ogg needs it to describe the stream, and
 * its pre-skip tells a decoder how many samples (at 48 kHz) of encoder delay to drop.
 */
function opusHead(preSkip48k: number): Uint8Array {
  const head = new Uint8Array(19);
  const view = new DataView(head.buffer);
  head.set(new TextEncoder().encode("OpusHead"));
  head[8] = 1; // version
  head[9] = 1; // channels
  view.setUint16(10, preSkip48k, true);
  view.setUint32(12, SAMPLE_RATE, true); // the input's rate, informational
  view.setInt16(16, 0, true); // output gain
  head[18] = 0; // channel mapping family 0: mono or stereo
  return head;
}

/**
 * libopus (compiled to WebAssembly, @evan/opus) behind Mediabunny's custom encoder interface,
 * so Mediabunny's Ogg muxer can pack its packets: Node has no WebCodecs encoder for Opus.
 * Encoding runs on the calling thread; 20 ms of mono speech takes a fraction of a millisecond.
 */
export class OpusPacketEncoder extends CustomAudioEncoder {
  #encoder: Encoder | undefined;
  #pending = new Int16Array(FRAME_SAMPLES);
  #pendingLength = 0;
  #samplesOut = 0;
  #described = false;

  static override supports(codec: string, config: AudioEncoderConfig): boolean {
    return codec === "opus" && config.numberOfChannels === 1 && config.sampleRate === SAMPLE_RATE;
  }

  init(): void {
    this.#encoder = new Encoder({ channels: 1, sample_rate: SAMPLE_RATE, application: "voip" });
    this.#encoder.ctl(OPUS_SET_BITRATE, BITRATE);
  }

  encode(sample: AudioSample): void {
    const samples = new Int16Array(sample.numberOfFrames);
    sample.copyTo(samples, { planeIndex: 0, format: "s16" });
    let at = 0;
    while (at < samples.length) {
      const take = Math.min(FRAME_SAMPLES - this.#pendingLength, samples.length - at);
      this.#pending.set(samples.subarray(at, at + take), this.#pendingLength);
      this.#pendingLength += take;
      at += take;
      if (this.#pendingLength === FRAME_SAMPLES) this.#emitFrame();
    }
  }

  flush(): void {
    if (this.#pendingLength === 0) return;
    // The last frame is padded with silence; the Ogg end granule trims it on playback.
    this.#pending.fill(0, this.#pendingLength);
    this.#pendingLength = FRAME_SAMPLES;
    this.#emitFrame();
  }

  close(): void {
    this.#encoder?.drop();
    this.#encoder = undefined;
  }

  #emitFrame(): void {
    const encoder = this.#encoder;
    if (!encoder) throw new Error("opus encoder used before init or after close");
    const data = encoder.encode(this.#pending);
    this.#pendingLength = 0;
    const packet = new EncodedPacket(
      data,
      "key",
      this.#samplesOut / SAMPLE_RATE,
      FRAME_SAMPLES / SAMPLE_RATE,
    );
    this.#samplesOut += FRAME_SAMPLES;
    if (this.#described) {
      this.onPacket(packet);
      return;
    }
    this.#described = true;
    // The lookahead is in the encoder's own rate; Ogg Opus counts pre-skip at 48 kHz.
    const preSkip = encoder.ctl(OPUS_GET_LOOKAHEAD) * (48_000 / SAMPLE_RATE);
    this.onPacket(packet, {
      decoderConfig: {
        codec: "opus",
        numberOfChannels: 1,
        sampleRate: 48_000,
        description: opusHead(preSkip),
      },
    });
  }
}
