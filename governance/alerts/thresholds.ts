import type { BudgetScope } from "../policy/budget-counters.js";
import { toMicros } from "../policy/money.js";
import { type AlertEvent, type AlertWindow, alertEvent, usdOf, windowJson } from "./events.js";

/** What the detector needs of a webhook (the rest stays in the database). */
export interface AlertWebhook {
  id: string;
  workspaceId: string;
  thresholdsPct: readonly number[];
  /** credits.low below this balance; null = never. */
  creditsBelowUsd: number | null;
}

/** One limit window's settled spend, read right after a settlement changed it. */
export interface LimitReading {
  scope: BudgetScope | "key_limit";
  guardrailId: string | null;
  /** The guardrail policy whose budget this is (guardrailId then holds the same id). */
  policyId?: string | null;
  /** The key whose counter this is; null for a member's counter. */
  keyHash: string | null;
  member: string | null;
  spentMicros: number;
  limitMicros: number;
  window: AlertWindow;
}

/**
 * An event for one webhook, with the key that makes it fire at most once:
 * the database refuses a second row with the same (webhook, once key), on
 * every replica (see store/webhooks). `keepUntil` is when that refusal may be
 * forgotten (the window's end); null = as long as the webhook exists.
 */
export interface DueAlert {
  webhookId: string;
  onceKey: string;
  keepUntil: Date | null;
  event: AlertEvent;
}

/**
 * Whose counter a reading is, for the once key: a guardrail budget per entity
 * (its window named), or a key's own limit.
 */
function counterName(r: LimitReading): string {
  const who = r.keyHash ? `key:${r.keyHash}` : `member:${r.member}`;
  return r.guardrailId ? `budget:${r.guardrailId}:${who}` : `key-limit:${who}`;
}

/**
 * The once key of a threshold: one per window, per guardrail and entity (or
 * per key limit), per percentage. Fired at most once across replicas because
 * the database keeps it unique.
 */
export function thresholdOnceKey(r: LimitReading, pct: number): string {
  return `${counterName(r)}:${r.window.id}:${pct}`;
}

/**
 * The thresholds a reading has reached: spend at or past pct% of the limit.
 * A limit of 0 has no percentages (everything is refused anyway). A threshold
 * reached before the webhook existed fires on the next settlement of the window.
 */
export function reachedThresholds(r: LimitReading, thresholdsPct: readonly number[]): number[] {
  if (r.limitMicros <= 0) return [];
  // Integers only: spend * 100 >= pct * limit, exactly in micro-dollars.
  return thresholdsPct.filter((pct) => r.spentMicros * 100 >= pct * r.limitMicros);
}

/** The budget.threshold events a reading makes due for each webhook of its workspace. */
export function thresholdAlerts(
  workspaceId: string,
  reading: LimitReading,
  webhooks: readonly AlertWebhook[],
  now: Date,
): DueAlert[] {
  const out: DueAlert[] = [];
  for (const hook of webhooks) {
    for (const pct of reachedThresholds(reading, hook.thresholdsPct)) {
      out.push({
        webhookId: hook.id,
        onceKey: thresholdOnceKey(reading, pct),
        keepUntil: reading.window.end,
        event: alertEvent("budget.threshold", workspaceId, now, {
          guardrail_id: reading.guardrailId,
          policy_id: reading.policyId ?? null,
          policy_type: reading.policyId ? "budget" : null,
          key_hash: reading.keyHash,
          member: reading.member,
          scope: reading.scope,
          threshold_pct: pct,
          spend_usd: usdOf(reading.spentMicros),
          limit_usd: usdOf(reading.limitMicros),
          window: windowJson(reading.window),
        }),
      });
    }
  }
  return out;
}

/**
 * What a budget's first refusal in a window makes due for each webhook that watches budgets
 * (has thresholds): budget.exhausted, its 100% threshold, and the thresholds its spend has
 * reached. Spend never reaches the limit when the request that would cross it is refused
 * first, so the refusal is what says the budget is used up; a threshold under 100% fires only
 * when the spend it reports reached it. The once keys are the settlements' own, so a
 * threshold fires once whichever of the two saw it first.
 */
export function exhaustedAlerts(
  workspaceId: string,
  reading: LimitReading,
  webhooks: readonly AlertWebhook[],
  now: Date,
): DueAlert[] {
  const out: DueAlert[] = [];
  const data = {
    guardrail_id: reading.guardrailId,
    policy_id: reading.policyId ?? null,
    policy_type: reading.policyId ? ("budget" as const) : null,
    key_hash: reading.keyHash,
    member: reading.member,
    scope: reading.scope,
    spend_usd: usdOf(reading.spentMicros),
    limit_usd: usdOf(reading.limitMicros),
    window: windowJson(reading.window),
  };
  for (const hook of webhooks) {
    if (hook.thresholdsPct.length === 0) continue;
    out.push({
      webhookId: hook.id,
      onceKey: exhaustedOnceKey(reading),
      keepUntil: reading.window.end,
      event: alertEvent("budget.exhausted", workspaceId, now, data),
    });
    // A limit of 0 has no percentages (as reachedThresholds).
    if (reading.limitMicros <= 0) continue;
    const reached = new Set(reachedThresholds(reading, hook.thresholdsPct));
    for (const pct of hook.thresholdsPct.filter((p) => p === 100 || reached.has(p))) {
      out.push({
        webhookId: hook.id,
        onceKey: thresholdOnceKey(reading, pct),
        keepUntil: reading.window.end,
        event: alertEvent("budget.threshold", workspaceId, now, { ...data, threshold_pct: pct }),
      });
    }
  }
  return out;
}

/** The once key of budget.exhausted: one per window, per guardrail and entity. */
export function exhaustedOnceKey(r: LimitReading): string {
  return `exhausted:${counterName(r)}:${r.window.id}`;
}

/**
 * The credits.low events due once the balance is below a webhook's amount.
 * Once per "credit epoch": the once key holds every credit ever added, which
 * any top-up (or removal) changes, so after credits are added the alert can
 * fire again the next time the balance falls below.
 */
export function creditAlerts(
  workspaceId: string,
  balanceMicros: number,
  creditsAddedMicros: number,
  webhooks: readonly AlertWebhook[],
  now: Date,
): DueAlert[] {
  const out: DueAlert[] = [];
  for (const hook of webhooks) {
    if (hook.creditsBelowUsd === null) continue;
    const below = toMicros(hook.creditsBelowUsd);
    if (balanceMicros >= below) continue;
    out.push({
      webhookId: hook.id,
      onceKey: `credits-low:${below}:${creditsAddedMicros}`,
      keepUntil: null,
      event: alertEvent("credits.low", workspaceId, now, {
        balance_usd: usdOf(balanceMicros),
        credits_below_usd: hook.creditsBelowUsd,
      }),
    });
  }
  return out;
}
