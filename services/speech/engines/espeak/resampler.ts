import createSpeexModule from "@echogarden/speex-resampler-wasm/simd";

/** One stream of 16-bit mono audio converted block by block, as the blocks are synthesized. */
export interface Resampler {
  /**
   * Converts the next block; the result may lag the input by the filter's delay. It is a view of
   * a buffer the next call reuses: copy what must outlive it.
   */
  push(samples: Int16Array): Int16Array;
  /**
   * Ends the stream: returns the rest (a fresh array), so that the whole output is exactly as long
   * as the input at the new rate. The resampler is then ready for the next stream.
   */
  end(): Int16Array;
}

/**
 * Speex's default quality (64-tap Kaiser-windowed sinc, ~80 dB stop band, 89% of the band kept):
 * transparent for eSpeak's 22 kHz formant voice. Measured (npm run bench): libsamplerate's fastest
 * sinc converter, a JavaScript build, took 47-50% of the engine workers' CPU; this real WebAssembly
 * build takes a few percent.
 */
const QUALITY = 4;

/**
 * Speex's resampler streams, so a sentence can leave in blocks before eSpeak has finished it. Its
 * tail is flushed by feeding silence, which is exactly what follows: every eSpeak utterance ends
 * in its own silence, so resetting between them leaves no audible seams.
 */
export async function createResampler(fromRate: number, toRate: number): Promise<Resampler> {
  const speex = await createSpeexModule();
  const lengths = speex._malloc(8);
  const state = speex._speex_resampler_init(1, fromRate, toRate, QUALITY, lengths);
  if (state === 0) {
    throw new Error(`speex resampler init failed (error ${speex.HEAPU32[lengths >> 2]})`);
  }
  speex._speex_resampler_skip_zeros(state);
  let capacity = 0;
  let input = 0;
  let output = 0;
  let consumed = 0;
  let produced = 0;
  let result = new Int16Array(4096);

  const ensure = (samples: number) => {
    if (samples <= capacity) return;
    speex._free(input);
    speex._free(output);
    capacity = Math.max(samples, 4096);
    input = speex._malloc(capacity * 2);
    // The output can be longer than the input by the rate ratio, plus a sample of rounding.
    output = speex._malloc((Math.ceil((capacity * toRate) / fromRate) + 2) * 2);
    if (input === 0 || output === 0) throw new Error("speex resampler: out of memory");
  };

  const process = (samples: Int16Array): Int16Array => {
    ensure(samples.length);
    speex.HEAP16.set(samples, input >> 1);
    const room = Math.ceil((samples.length * toRate) / fromRate) + 2;
    speex.HEAPU32[lengths >> 2] = samples.length;
    speex.HEAPU32[(lengths >> 2) + 1] = room;
    const error = speex._speex_resampler_process_int(state, 0, input, lengths, output, lengths + 4);
    const used = speex.HEAPU32[lengths >> 2];
    const made = speex.HEAPU32[(lengths >> 2) + 1];
    if (error !== 0 || used !== samples.length) {
      throw new Error(`speex resampler failed (error ${error}, used ${used} of ${samples.length})`);
    }
    consumed += used;
    produced += made;
    // Copied out of the wasm heap into one reused buffer: a block's worth of garbage fewer.
    if (result.length < made) result = new Int16Array(Math.max(made, result.length * 2));
    result.set(speex.HEAP16.subarray(output >> 1, (output >> 1) + made));
    return result.subarray(0, made);
  };

  return {
    push: (samples) => (samples.length === 0 ? new Int16Array(0) : process(samples)),
    end() {
      const expected = Math.round((consumed * toRate) / fromRate);
      const parts: Int16Array[] = [];
      let have = produced;
      // Each round of silence pushes out more of the delayed tail; a few rounds at most.
      for (let round = 0; have < expected && round < 16; round++) {
        const before = produced;
        const tail = process(new Int16Array(Math.max(64, expected - have)));
        parts.push(tail.slice(0, Math.min(tail.length, expected - have)));
        have += Math.min(produced - before, expected - have);
      }
      speex._speex_resampler_reset_mem(state);
      speex._speex_resampler_skip_zeros(state);
      consumed = 0;
      produced = 0;
      return concat(parts);
    },
  };
}

function concat(parts: Int16Array[]): Int16Array {
  if (parts.length === 1) return parts[0];
  // (More than one round only happens for a tail longer than the filter's delay, i.e. never.)
  const out = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
