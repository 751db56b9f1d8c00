import { SPEECH_LIMITS } from "../../../../domain/limits.js";

/** eSpeak NG's own default speaking rate. */
export const DEFAULT_WORDS_PER_MINUTE = 175;
/** eSpeak NG clamps rates to this range when built without libsonic, as this wasm build is. */
export const MIN_WORDS_PER_MINUTE = 80;
export const MAX_WORDS_PER_MINUTE = 450;

/**
 * Speed is a multiplier on eSpeak's default rate: 1 → 175 wpm, 0.5 → 88 wpm, 2 → 350 wpm.
 * The result is clamped to 80..450 wpm, so speeds below ~0.46 or above ~2.57 saturate.
 */
export function wordsPerMinute(speed: number): number {
  if (!Number.isFinite(speed) || speed < SPEECH_LIMITS.minSpeed || speed > SPEECH_LIMITS.maxSpeed) {
    throw new RangeError(
      `speed must be between ${SPEECH_LIMITS.minSpeed} and ${SPEECH_LIMITS.maxSpeed}, got ${speed}`,
    );
  }
  const rate = Math.round(DEFAULT_WORDS_PER_MINUTE * speed);
  return Math.min(MAX_WORDS_PER_MINUTE, Math.max(MIN_WORDS_PER_MINUTE, rate));
}
