import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";

export { timestampFromMs, timestampMs };

/**
 * Where code that keeps time windows (the per-key rate window, budget days) reads "now", in ms
 * since the epoch: production runs on the system clock; a test passes a clock of its own so a
 * window starts where it wants instead of waiting for a real minute boundary.
 */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** The current time as a protobuf Timestamp. */
export function nowTimestamp() {
  return timestampFromMs(Date.now());
}
