import { RESET_INTERVALS, type ResetIntervalName } from "./enums.js";

const DAY_MS = 86_400_000;

/**
 * The calendar windows spend is counted in: a guardrail's budget (reset_interval) and a key's
 * limit (limit_reset) and usage counters use the same ones, so they count the same days. They
 * are named by the ResetInterval enum's API names (domain/enums.ts).
 */
export const WINDOW_INTERVALS = RESET_INTERVALS.names;
export type WindowInterval = ResetIntervalName;

export interface BudgetWindow {
  /** Names the window for people, e.g. "daily:2026-11-22". */
  id: string;
  start: Date;
  end: Date;
  /** The UTC day numbers (see utcDay) of the window's first day and of `now`'s day. */
  firstDay: number;
  today: number;
}

/**
 * Days since 1970-01-01 in UTC: spend is kept in one bucket per day, so the
 * spend of any window (day, week, month) is the sum of its days, and changing
 * a guardrail's reset_interval counts what was already spent in the new window.
 */
export function utcDay(at: Date): number {
  return Math.floor(at.getTime() / DAY_MS);
}

/**
 * Spend-limit windows in UTC: days start at 00:00, weeks on Monday 00:00,
 * months on the 1st at 00:00 (gaps-filled.md).
 */
export function budgetWindow(interval: WindowInterval, now: Date): BudgetWindow {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  let start: Date;
  let end: Date;
  if (interval === "daily") {
    start = new Date(Date.UTC(y, m, d));
    end = new Date(Date.UTC(y, m, d + 1));
  } else if (interval === "weekly") {
    const sinceMonday = (now.getUTCDay() + 6) % 7;
    start = new Date(Date.UTC(y, m, d - sinceMonday));
    end = new Date(Date.UTC(y, m, d - sinceMonday + 7));
  } else {
    start = new Date(Date.UTC(y, m, 1));
    end = new Date(Date.UTC(y, m + 1, 1));
  }
  return {
    id: `${interval}:${start.toISOString().slice(0, 10)}`,
    start,
    end,
    firstDay: utcDay(start),
    today: utcDay(now),
  };
}

/**
 * budgetWindow's day numbers alone, without the window's dates and name: what admission
 * reserves against on every request. Days are consecutive integers, so a window's first day
 * is today less the days since it began.
 */
export function budgetDays(
  interval: WindowInterval,
  now: Date,
): Pick<BudgetWindow, "firstDay" | "today"> {
  const today = utcDay(now);
  if (interval === "daily") return { firstDay: today, today };
  if (interval === "weekly") return { firstDay: today - ((now.getUTCDay() + 6) % 7), today };
  return { firstDay: today - (now.getUTCDate() - 1), today };
}
