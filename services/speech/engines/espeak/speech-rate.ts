/** eSpeak NG's own default speaking rate. */
export const DEFAULT_WORDS_PER_MINUTE = 175;
/** eSpeak NG clamps rates to this range when built without libsonic, as this wasm build is. */
export const MIN_WORDS_PER_MINUTE = 80;
export const MAX_WORDS_PER_MINUTE = 450;

export const MIN_SPEED = 0.25;
export const MAX_SPEED = 4;

/**
 * Speed is a multiplier on eSpeak's default rate: 1 → 175 wpm, 0.5 → 88 wpm, 2 → 350 wpm.
 * The result is clamped to 80..450 wpm, so speeds below ~0.46 or above ~2.57 saturate.
 */
export function wordsPerMinute(speed: number): number {
  if (!Number.isFinite(speed) || speed < MIN_SPEED || speed > MAX_SPEED) {
    throw new RangeError(`speed must be between ${MIN_SPEED} and ${MAX_SPEED}, got ${speed}`);
  }
  const rate = Math.round(DEFAULT_WORDS_PER_MINUTE * speed);
  return Math.min(MAX_WORDS_PER_MINUTE, Math.max(MIN_WORDS_PER_MINUTE, rate));
}
