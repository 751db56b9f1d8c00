import type { Clock } from "../../platform/time.js";

/** Rate windows are whole minutes of the clock admission reads. */
const MINUTE_MS = 60_000;

/**
 * A clock that runs with real time at an offset the test chooses: `startMinuteAt(10_000)`
 * makes "now" 10 s into a minute, so a burst lands inside one rate window (and its
 * Retry-After is not a whole minute) without waiting for a real minute boundary.
 */
export class ShiftedClock implements Clock {
  private offsetMs = 0;

  now(): number {
    return Date.now() + this.offsetMs;
  }

  /** Moves "now" forward to `msIntoMinute` into the next minute; time runs on from there. */
  startMinuteAt(msIntoMinute: number): void {
    const now = this.now();
    const nextMinute = now - (now % MINUTE_MS) + MINUTE_MS;
    this.offsetMs += nextMinute + msIntoMinute - now;
  }

  /** Moves "now" forward by `ms` (e.g. into the next UTC day, a budget window later). */
  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /** Whole seconds until the current rate window ends, as a Retry-After counts them. */
  secondsLeftInMinute(): number {
    return Math.ceil((MINUTE_MS - (this.now() % MINUTE_MS)) / 1000);
  }
}
