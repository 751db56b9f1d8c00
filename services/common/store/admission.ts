/** One budget counter a request is charged against. */
export interface BudgetCharge {
  guardrailId: string;
  /** The budget window id ("daily:2026-11-22"). */
  window: string;
  limitMicros: number;
  amountMicros: number;
  /** Counter lifetime: past the window's end, so it expires on its own. */
  ttlSeconds: number;
}

/**
 * Everything one request must be admitted against, checked and reserved in
 * one atomic step: the key's rate limit, the workspace credit balance (when
 * metered), the key's own credit limit, and every applicable guardrail budget.
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
  keyMicros: number;
  budgets: BudgetCharge[];
}

export type AdmissionResult =
  | { ok: true; metered: boolean }
  | { ok: false; reason: "rate-limit"; retryAfterMs: number }
  | { ok: false; reason: "credits"; balanceMicros: number }
  | { ok: false; reason: "key-limit"; spentMicros: number }
  | { ok: false; reason: "budget"; guardrailId: string; spentMicros: number };

/** What a request really cost, to replace its reservation. */
export interface Settlement {
  creditMicros: number;
  keyMicros: number;
  /** Spent through the caller's own provider key (BYOK): counted in the key's BYOK usage only. */
  byokMicros?: number;
  budgets: { guardrailId: string; window: string; amountMicros: number }[];
}

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
