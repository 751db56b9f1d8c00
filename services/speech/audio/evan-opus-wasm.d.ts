// The package types only its entry point (which may load a native addon); this declares the
// pure-WebAssembly build's Encoder, the one part used here.
declare module "@evan/opus/wasm/index.mjs" {
  export class Encoder {
    constructor(options: {
      channels: 1 | 2;
      sample_rate: 8000 | 12000 | 16000 | 24000 | 48000;
      application: "voip" | "audio" | "restricted_lowdelay";
    });
    /** Reads (no value) or sets an encoder CTL; throws on an Opus error code. */
    ctl(request: number, value?: number): number;
    /** One frame of 16-bit interleaved PCM in, one Opus packet out (a copy). */
    encode(pcm: ArrayBufferView): Uint8Array;
    /** Frees the encoder's WebAssembly memory. */
    drop(): void;
  }
}
