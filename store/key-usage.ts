import { budgetWindow } from "../governance/policy/windows.js";

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
}

const INTERVALS = ["daily", "weekly", "monthly"] as const;

/**
 * The windows are the budget windows (UTC days, Monday weeks, calendar months), so a key's
 * "usage_daily" and a daily guardrail budget count the same day. A window's counter lives a
 * day past the window's end, then expires: nothing reads a past window.
 */
function windowCounters(stem: string, now: Date): UsageCounter[] {
  return INTERVALS.map((interval) => {
    const w = budgetWindow(interval, now);
    return {
      suffix: `${stem}:${w.id}`,
      ttlSeconds: Math.ceil((w.end.getTime() - now.getTime()) / 1000) + 86_400,
    };
  });
}

/**
 * The counters a settled request adds its real cost to, in a fixed order: credit spend per
 * window (the all-time credit spend is the key-limit counter, kept apart), then BYOK spend
 * all-time and per window.
 */
export function keyUsageCounters(keyHash: string, now: Date): UsageCounter[] {
  return [
    ...windowCounters(`keyusage:${keyHash}:credit`, now),
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
