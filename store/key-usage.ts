import { budgetWindow, utcDay, WINDOW_INTERVALS, type WindowInterval } from "../domain/windows.js";

/** What a key spent, in micro-USD: on service credits, and through its own provider keys (BYOK). */
export interface KeyUsage {
  totalMicros: number;
  dailyMicros: number;
  weeklyMicros: number;
  monthlyMicros: number;
  byokTotalMicros: number;
  byokDailyMicros: number;
  byokWeeklyMicros: number;
  byokMonthlyMicros: number;
}

/** One usage counter a settlement adds to: a key name suffix, and how long it must live. */
export interface UsageCounter {
  suffix: string;
  /** 0 = kept (an all-time total). */
  ttlSeconds: number;
  /** The window of a credit-spend counter (the ones a key limit with limit_reset is checked on). */
  creditWindow?: KeyLimitInterval;
  /** The window's id (e.g. "daily:2026-11-26"), the suffix's last part; absent: all-time. */
  windowId?: string;
}

const INTERVALS = WINDOW_INTERVALS;
export type KeyLimitInterval = WindowInterval;

/**
 * The windows are the budget windows (UTC days, Monday weeks, calendar months), so a key's
 * "usage_daily" and a daily guardrail budget count the same day. A window's counter lives a
 * day past the window's end, then expires: nothing reads a past window.
 */
function windowCounter(stem: string, interval: KeyLimitInterval, now: Date): UsageCounter {
  const w = usageWindow(interval, now);
  return { suffix: `${stem}:${w.id}`, ttlSeconds: w.ttlSeconds, windowId: w.id };
}

/**
 * The last window worked out per interval, with the UTC day it was worked out for: every
 * window starts and ends at a UTC midnight, so a window is the same all day. Working it out
 * (Dates, an ISO string) for each of the three intervals on every settlement was 1.4% of the
 * CPU of `npm start`'s speech path at 1 connection (bench/HISTORY.md).
 */
const lastWindows = new Map<KeyLimitInterval, { day: number; id: string; endMs: number }>();

/** The usage window of `interval` that holds `now`: its id, and how long its counters live. */
export function usageWindow(
  interval: KeyLimitInterval,
  now: Date,
): { id: string; ttlSeconds: number } {
  const nowMs = now.getTime();
  const day = utcDay(now);
  let w = lastWindows.get(interval);
  if (w?.day !== day) {
    const window = budgetWindow(interval, now);
    w = { day, id: window.id, endMs: window.end.getTime() };
    lastWindows.set(interval, w);
  }
  return { id: w.id, ttlSeconds: Math.ceil((w.endMs - nowMs) / 1000) + 86_400 };
}

/** The usage windows that hold `now`: daily, weekly, monthly (Redis settles a group with them). */
export function usageWindows(now: Date): { id: string; ttlSeconds: number }[] {
  return INTERVALS.map((interval) => usageWindow(interval, now));
}

function windowCounters(stem: string, now: Date): UsageCounter[] {
  return INTERVALS.map((interval) => windowCounter(stem, interval, now));
}

/**
 * The counter a key limit with limit_reset is checked and reserved on: the key's credit spend
 * in the current window, the very counter usage_daily/_weekly/_monthly read. Admission reserves
 * the worst case on it and settlement replaces that with the real cost on the same window, so a
 * limit counts what its window already spent even when limit_reset changed within it.
 */
export function keyLimitCounter(
  keyHash: string,
  interval: KeyLimitInterval,
  now: Date,
): UsageCounter {
  return { ...windowCounter(`keyusage:${keyHash}:credit`, interval, now), creditWindow: interval };
}

/**
 * The BYOK spend counter a key limit with include_byok_in_limit adds to its credit counter:
 * all-time, or the limit_reset window's (the very counters byok_usage* read).
 */
export function keyLimitByokSuffix(keyHash: string, keyLimitWindow: UsageCounter | undefined) {
  return `keyusage:${keyHash}:byok:${keyLimitWindow?.windowId ?? "total"}`;
}

/**
 * The counters a settled request adds its real cost to, in a fixed order: credit spend per
 * window (the all-time credit spend is the key-limit counter, kept apart), then BYOK spend
 * all-time and per window.
 */
export function keyUsageCounters(keyHash: string, now: Date): UsageCounter[] {
  return [
    ...INTERVALS.map((interval) => keyLimitCounter(keyHash, interval, now)),
    { suffix: `keyusage:${keyHash}:byok:total`, ttlSeconds: 0 },
    ...windowCounters(`keyusage:${keyHash}:byok`, now),
  ];
}

/** The amounts to add, in the order of keyUsageCounters. */
export function keyUsageAmounts(creditMicros: number, byokMicros: number): number[] {
  return [creditMicros, creditMicros, creditMicros, byokMicros, byokMicros, byokMicros, byokMicros];
}

/** Builds a KeyUsage from the all-time credit spend and the counters' values in their order. */
export function keyUsageFrom(totalMicros: number, values: number[]): KeyUsage {
  const [d = 0, w = 0, m = 0, bt = 0, bd = 0, bw = 0, bm = 0] = values;
  return {
    totalMicros,
    dailyMicros: d,
    weeklyMicros: w,
    monthlyMicros: m,
    byokTotalMicros: bt,
    byokDailyMicros: bd,
    byokWeeklyMicros: bw,
    byokMonthlyMicros: bm,
  };
}

/** A usage counter a settlement changes, and by how much. */
export interface UsageChange {
  suffix: string;
  amountMicros: number;
  /** 0 = kept (an all-time total). */
  ttlSeconds: number;
  /**
   * The admission already reserved on this counter (a key limit's window): the amount is the
   * real cost less the reservation, applied only while the counter exists (it may be negative).
   */
  delta: boolean;
}

/**
 * What a settlement adds to the key's usage counters: the real cost on each window of now,
 * except the key limit's window counter, which holds the admission's reservation and gets the
 * difference, on the window the admission charged (even when the stream ended in the next).
 */
export function settlementUsage(
  keyHash: string,
  keyLimitWindow: UsageCounter | undefined,
  reservedMicros: number,
  creditMicros: number,
  byokMicros: number,
  now: Date,
): UsageChange[] {
  const amounts = keyUsageAmounts(creditMicros, byokMicros);
  return keyUsageCounters(keyHash, now).map((c, i) =>
    keyLimitWindow && c.creditWindow === keyLimitWindow.creditWindow
      ? {
          suffix: keyLimitWindow.suffix,
          amountMicros: creditMicros - reservedMicros,
          ttlSeconds: keyLimitWindow.ttlSeconds,
          delta: true,
        }
      : { suffix: c.suffix, amountMicros: amounts[i] ?? 0, ttlSeconds: c.ttlSeconds, delta: false },
  );
}
