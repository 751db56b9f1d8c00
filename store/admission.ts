import type { UsageCounter } from "./key-usage.js";
import type { Recovery } from "./reservations.js";

/**
 * One budget counter a request is charged against: the spend of one entity
 * (a key or a member) under one guardrail, kept per UTC day so that the spend
 * of any window is the sum of its days (a changed reset_interval forgets
 * nothing already spent in the new window).
 */
export interface BudgetCharge {
  guardrailId: string;
  /** Whose spend: `key:<hash>` or `member:<user id>` (budgets are per entity, never pooled). */
  entity: string;
  /** UTC day number (days since 1970-01-01) of the window's first day. */
  firstDay: number;
  /** UTC day number of the admission: the window's last day so far, and the bucket charged. */
  day: number;
  limitMicros: number;
  amountMicros: number;
}

/** A window of one counter, to read its spend. */
export interface SpendWindow {
  guardrailId: string;
  entity: string;
  firstDay: number;
  lastDay: number;
}

/** A guardrail's budget window, to read what every entity charged under it spent in it. */
export interface GuardrailSpendQuery {
  guardrailId: string;
  firstDay: number;
  lastDay: number;
}

/** What the entities charged under one guardrail spent in its window, in micro-USD. */
export interface GuardrailSpend {
  /** Summed over the keys charged (`key:` entities). */
  keyMicros: number;
  /** Summed over the members charged (`member:` entities). */
  memberMicros: number;
  /** The largest single entity's spend: the one closest to the (per entity) limit. */
  maxEntityMicros: number;
  /** How many entities spent anything in the window. */
  entities: number;
}

/**
 * Everything one request must be admitted against, checked and reserved in
 * one atomic step: the key's rate limit, the workspace credit balance (when
 * metered), every applicable guardrail budget, and the key's own limit.
 */
export interface Admission {
  /** When set, settle() applies at most once per id (a retried settlement is never charged twice). */
  id?: string;
  scope: string;
  keyHash: string;
  rate?: { limit: number; windowMs: number; nowMs: number };
  creditMicros: number;
  /** The key's credit limit; undefined = none. */
  keyLimitMicros?: number;
  /**
   * Where a key limit with limit_reset is checked: the key's credit-spend counter of the
   * current window (keyLimitCounter), reserved with keyMicros besides the all-time spend.
   * Undefined: the limit (if any) is all-time, checked on the all-time spend.
   */
  keyLimitWindow?: UsageCounter;
  /**
   * The key's include_byok_in_limit: its limit is checked on its credit spend plus its BYOK
   * spend of the same window (keyLimitByokSuffix), and keyMicros reserves the worst case of any
   * endpoint, BYOK or not. The reservation sits on the credit counter until settlement moves
   * the BYOK part to the BYOK counters, so the sum is exact at every instant.
   */
  keyLimitIncludesByok?: boolean;
  keyMicros: number;
  budgets: BudgetCharge[];
  /** Registers the reservation so that a live process settles it if its owner dies (needs `id`). */
  recovery?: Recovery;
}

export type AdmissionResult =
  /** `rateUsed`: requests counted in the key's rate window, this one included (when rate-limited). */
  | { ok: true; metered: boolean; rateUsed?: number }
  | { ok: false; reason: "rate-limit"; retryAfterMs: number }
  | { ok: false; reason: "credits"; balanceMicros: number }
  | { ok: false; reason: "key-limit"; spentMicros: number }
  | { ok: false; reason: "budget"; guardrailId: string; entity: string; spentMicros: number };

/** What a request really cost, to replace its reservation. */
export interface Settlement {
  creditMicros: number;
  keyMicros: number;
  /** Spent through the caller's own provider key (BYOK): counted in the key's BYOK usage only. */
  byokMicros?: number;
  budgets: { guardrailId: string; entity: string; amountMicros: number }[];
}

/** Identifies a counter within a workspace (settlements are matched to reservations by it). */
export function counterId(c: { guardrailId: string; entity: string }): string {
  return `${c.guardrailId}/${c.entity}`;
}

/**
 * Day buckets kept per counter: the longest window is a month, at most 31
 * days (today and the 30 before), so older days are never read again; one
 * more day absorbs replicas whose clocks straddle midnight. A counter lives a
 * day longer than that after its last charge, then expires on its own.
 */
export const SPEND_DAYS_KEPT = 32;
export const SPEND_TTL_SECONDS = (SPEND_DAYS_KEPT + 1) * 24 * 3600;

/** How long a settled admission id is remembered: longer than any settlement is retried. */
export const SETTLED_MARKER_TTL_SECONDS = 15 * 60;

export function rateWindowIndex(rate: NonNullable<Admission["rate"]>): number {
  return Math.floor(rate.nowMs / rate.windowMs);
}

/**
 * Windows are aligned to multiples of windowMs, so the counter lives until its
 * window ends (not windowMs after its first request): its remaining lifetime
 * is then the honest Retry-After.
 */
export function rateWindowRemainingMs(rate: NonNullable<Admission["rate"]>): number {
  return rate.windowMs - (rate.nowMs % rate.windowMs);
}
