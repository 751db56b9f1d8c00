import { newId } from "../../domain/ids.js";
import type { WindowInterval } from "../../domain/windows.js";
import { budgetWindow } from "../../domain/windows.js";
import type { PolicyType } from "../../store/policies/types.js";
import type { BudgetScope } from "../policy/budget-counters.js";
import { fromMicros } from "../policy/money.js";

export type AlertEventType =
  | "budget.threshold"
  | "budget.exhausted"
  | "credits.low"
  | "guardrail.shadow_expired"
  | "guardrail_policy.shadow_expired"
  | "account_policy.shadow_expired"
  | "webhook.test";

/** A limit window: a guardrail's reset_interval, or a key limit's (all-time unless it resets). */
export interface AlertWindow {
  interval: WindowInterval | "all_time";
  /** Names the window within its interval, e.g. "daily:2026-11-22" (part of the once-only key). */
  id: string;
  start: Date | null;
  end: Date | null;
}

/**
 * What one event says. Every type carries every field (null where it does not
 * apply), so a receiver reads one shape: `scope` says which limit it was
 * (a guardrail budget layer, as Explain names them, or the key's own limit).
 */
export interface AlertEventData {
  guardrail_id: string | null;
  /**
   * Set when the budget is a guardrail policy's (guardrail_id then holds the same id), and on
   * guardrail_policy.shadow_expired and account_policy.shadow_expired (guardrail_id null: a
   * policy may share its id with the guardrail whose part it took over, whose shadow is another
   * one).
   */
  policy_id: string | null;
  /** The policy's type wherever policy_id is set (a budget's is "budget"). */
  policy_type: PolicyType | null;
  key_hash: string | null;
  member: string | null;
  scope: BudgetScope | "key_limit" | null;
  threshold_pct: number | null;
  spend_usd: number | null;
  limit_usd: number | null;
  window: { interval: AlertWindow["interval"]; start: string | null; end: string | null } | null;
  balance_usd: number | null;
  credits_below_usd: number | null;
  /** guardrail(_policy).shadow_expired: the shadow and its report's counts as it expired. */
  shadow: ShadowExpiredData | null;
}

/** How often a shadow decided one way where the live guardrail decided another. */
export interface ShadowChangeData {
  live: string;
  shadow: string;
  count: number;
}

/** An expired shadow as its webhook event reports it (the GET .../shadow report's counts). */
export interface ShadowExpiredData {
  /** The fields its change writes. */
  update_mask: string[];
  started_at: string | null;
  expires_at: string | null;
  outcomes_changed: number;
  changes: ShadowChangeData[];
  affected_generation_ids: string[];
  budget: {
    outcomes_changed: number;
    changes: ShadowChangeData[];
    affected_generation_ids: string[];
  };
}

/** The JSON body a webhook receives (signed as sent: see services/webhooks/webhook-signature.ts). */
export interface AlertEvent {
  id: string;
  type: AlertEventType;
  created_at: string;
  workspace_id: string;
  data: AlertEventData;
}

const NO_DATA: AlertEventData = {
  guardrail_id: null,
  policy_id: null,
  policy_type: null,
  key_hash: null,
  member: null,
  scope: null,
  threshold_pct: null,
  spend_usd: null,
  limit_usd: null,
  window: null,
  balance_usd: null,
  credits_below_usd: null,
  shadow: null,
};

export function alertEvent(
  type: AlertEventType,
  workspaceId: string,
  now: Date,
  data: Partial<AlertEventData> = {},
): AlertEvent {
  return {
    id: `evt_${newId()}`,
    type,
    created_at: now.toISOString(),
    workspace_id: workspaceId,
    data: { ...NO_DATA, ...data },
  };
}

export function windowJson(w: AlertWindow): AlertEventData["window"] {
  return {
    interval: w.interval,
    start: w.start ? w.start.toISOString() : null,
    end: w.end ? w.end.toISOString() : null,
  };
}

/** Micro-dollars as the API's USD numbers. */
export function usdOf(micros: number): number {
  return fromMicros(micros);
}

/**
 * The budget window of a UTC day (days since the epoch): the day a request was charged to
 * (admission's), not the clock's now.
 */
export function windowOfDay(interval: WindowInterval, day: number): AlertWindow {
  const w = budgetWindow(interval, new Date(day * 86_400_000));
  return { interval, id: w.id, start: w.start, end: w.end };
}
