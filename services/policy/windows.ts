import type { BudgetSpec } from "./types.js";

export interface BudgetWindow {
  /** Identifies the window in counter keys, e.g. "daily:2026-11-22". */
  id: string;
  start: Date;
  end: Date;
}

/**
 * Spend-limit windows in UTC: days start at 00:00, weeks on Monday 00:00,
 * months on the 1st at 00:00 (gaps-filled.md).
 */
export function budgetWindow(interval: BudgetSpec["interval"], now: Date): BudgetWindow {
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
  return { id: `${interval}:${start.toISOString().slice(0, 10)}`, start, end };
}
