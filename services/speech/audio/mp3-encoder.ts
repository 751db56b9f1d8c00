import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { createEncoder, type WasmMediaEncoder } from "wasm-media-encoders";
import { audioContentType } from "../../../domain/audio-formats.js";
import { type AudioEncoder, SAMPLE_RATE } from "./format.js";
import { int16ToFloat32 } from "./sample-conversion.js";

/** 64 kbps CBR is transparent enough for synthetic mono speech at 24 kHz and keeps streams small. */
const BITRATE = 64;

// The project's `lib` carries no WebAssembly typings; this is the one global call needed here.
declare const WebAssembly: { compile(bytes: Uint8Array): Promise<object> };

let compiled: Promise<object> | undefined;

/** LAME is compiled once per process; each stream then only instantiates it, which is cheap. */
function lameModule(): Promise<object> {
  compiled ??= readFile(fileURLToPath(import.meta.resolve("wasm-media-encoders/wasm/mp3")))
    .then((bytes) => WebAssembly.compile(bytes))
    .catch((error: unknown) => {
      compiled = undefined;
      throw error;
    });
  return compiled;
}

export class Mp3Encoder implements AudioEncoder {
  readonly contentType = audioContentType("mp3");
  #flushed = false;
  #scratch = new Float32Array(0);

  private constructor(private readonly lame: WasmMediaEncoder<"audio/mpeg">) {}

  static async create(): Promise<Mp3Encoder> {
    const lame = await createEncoder("audio/mpeg", await lameModule());
    lame.configure({
      channels: 1,
      sampleRate: SAMPLE_RATE,
      outputSampleRate: SAMPLE_RATE,
      bitrate: BITRATE,
    });
    return new Mp3Encoder(lame);
  }

  encode(samples: Int16Array): Uint8Array {
    if (this.#flushed) {
      throw new Error("mp3 encoder was already flushed");
    }
    if (samples.length === 0) {
      return new Uint8Array(0);
    }
    // LAME copies its input into its own memory, so one scratch buffer serves every call.
    if (this.#scratch.length < samples.length) {
      this.#scratch = new Float32Array(Math.max(samples.length, this.#scratch.length * 2));
    }
    const input = this.#scratch.subarray(0, samples.length);
    int16ToFloat32(samples, input);
    // The encoder reuses its output buffer on the next call, so the bytes are copied out.
    return this.lame.encode([input]).slice();
  }

  flush(): Uint8Array {
    if (this.#flushed) {
      return new Uint8Array(0);
    }
    this.#flushed = true;
    return this.lame.finalize().slice();
  }
}
