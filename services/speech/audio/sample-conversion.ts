/**
 * Maps 16-bit PCM onto [-1, 1), the range the wasm codecs expect; into `out` when given (at least
 * as long as `samples`), so a hot loop can reuse one buffer.
 */
export function int16ToFloat32(
  samples: Int16Array,
  out = new Float32Array(samples.length),
): Float32Array {
  for (let i = 0; i < samples.length; i++) {
    out[i] = samples[i] / 32768;
  }
  return out;
}

/** Resampling can overshoot full scale slightly, so values are clamped rather than wrapped. */
export function float32ToInt16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    out[i] = Math.max(-32768, Math.min(32767, Math.round(samples[i] * 32768)));
  }
  return out;
}
