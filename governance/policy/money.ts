/**
 * Money is counted in integer micro-dollars in Redis: INCRBY is exact and
 * atomic, where floating-point sums would drift.
 */
export const MICROS_PER_USD = 1_000_000;

export function toMicros(usd: number): number {
  return Math.ceil(usd * MICROS_PER_USD - 1e-9);
}

export function fromMicros(micros: number): number {
  return micros / MICROS_PER_USD;
}
