// The package ships no typings; this declares only the parts of its Emscripten surface we use.
declare module "@echogarden/speex-resampler-wasm/simd" {
  /** Pointers are byte offsets into the module's heap; views must be re-read after any _malloc. */
  interface SpeexModule {
    readonly HEAP16: Int16Array;
    readonly HEAPU32: Uint32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** Returns the state, or 0 with an error code written to `errorPointer`. */
    _speex_resampler_init(
      channels: number,
      inRate: number,
      outRate: number,
      quality: number,
      errorPointer: number,
    ): number;
    _speex_resampler_destroy(state: number): void;
    /** Reads and writes the lengths through the two pointers; returns an error code (0: fine). */
    _speex_resampler_process_int(
      state: number,
      channel: number,
      input: number,
      inputLengthPointer: number,
      output: number,
      outputLengthPointer: number,
    ): number;
    _speex_resampler_skip_zeros(state: number): number;
    _speex_resampler_reset_mem(state: number): number;
  }

  export default function createSpeexModule(options?: object): Promise<SpeexModule>;
}
