import { budgetDays } from "../../domain/windows.js";
import { componentLogger } from "../../platform/observability/logger.js";
import type { Store } from "../../store/types.js";
import type { NewDelivery, WebhookStore } from "../../store/webhooks/types.js";
import type { Principal } from "../governance-cache.js";
import { type BudgetCounter, budgetCounters } from "../policy/budget-counters.js";
import { toMicros } from "../policy/money.js";
import { windowOfDay } from "./events.js";
import {
  type AlertWebhook,
  type DueAlert,
  exhaustedAlerts,
  type LimitReading,
  thresholdAlerts,
} from "./thresholds.js";

const log = componentLogger("alerts");
const KEY_PAGE = 500;
/** A catch-up reads at most this many keys of the workspace. */
const MAX_KEYS = 10_000;

/** A due alert as the delivery row that queues it. */
export function toDelivery(a: DueAlert): NewDelivery {
  return {
    webhookId: a.webhookId,
    workspaceId: a.event.workspace_id,
    eventId: a.event.id,
    eventType: a.event.type,
    body: JSON.stringify(a.event),
    onceKey: a.onceKey,
    keepUntil: a.keepUntil,
  };
}

/** The budgets that refused a workspace's requests since an instant (the request log). */
export type BudgetRefusalsSince = (
  workspaceId: string,
  sinceMs: number,
) => Promise<{ guardrailId: string; keyHash: string; atMs: number }[]>;

/** Resolves a key hash to its effective policy (the governance cache). */
export interface PrincipalLookup {
  get(keyHash: string): Promise<Principal | undefined>;
}

/**
 * The budget thresholds a new (or newly enabled) webhook's windows have already crossed: every
 * budget counter of the workspace's keys (and their members), read in one round trip, each
 * threshold reached queued for this webhook with the settlements' own once keys, so it fires
 * once now and never again in the window. Without it, a threshold crossed before the webhook
 * existed would wait for the window's next settlement. A budget that already refused a request
 * in its window (its spend stays under the limit: the request that would cross it is refused)
 * gets budget.exhausted and its 100% threshold, from the request log's refusals.
 */
export async function catchUpThresholds(
  deps: {
    store: Store;
    webhooks: WebhookStore;
    principals: PrincipalLookup;
    budgetRefusals?: BudgetRefusalsSince;
  },
  hook: AlertWebhook,
  now: Date,
): Promise<number> {
  if (hook.thresholdsPct.length === 0) return 0;
  const counters = new Map<string, { counter: BudgetCounter; scope: string }>();
  const memberOf = new Map<string, string>();
  for (let offset = 0; offset < MAX_KEYS; offset += KEY_PAGE) {
    const page = await deps.store.listKeys(hook.workspaceId, offset, KEY_PAGE);
    for (const key of page.items) {
      if (key.memberUserId) memberOf.set(key.hash, key.memberUserId);
      const principal = await deps.principals.get(key.hash);
      if (!principal) continue;
      for (const c of budgetCounters(principal.policy.budgets, key.hash, key.memberUserId)) {
        if (c.budget.limitUsd <= 0) continue;
        counters.set(`${c.budget.guardrailId}/${c.entity}`, { counter: c, scope: principal.scope });
      }
    }
    if (page.items.length < KEY_PAGE || offset + KEY_PAGE >= page.total) break;
  }
  const list = [...counters.values()];
  if (list.length === 0) return 0;
  const windows = list.map(({ counter: c }) => {
    const days = budgetDays(c.budget.interval, now);
    return { guardrailId: c.budget.guardrailId, entity: c.entity, ...days };
  });
  const spent = await deps.store.getSpend(
    hook.workspaceId,
    windows.map((w) => ({
      guardrailId: w.guardrailId,
      entity: w.entity,
      firstDay: w.firstDay,
      lastDay: w.today,
    })),
  );
  const readings = list.map(({ counter: c }, i) => {
    const member = c.entity.startsWith("member:");
    return {
      scope: c.scope,
      guardrailId: c.budget.guardrailId,
      policyId: c.budget.policy ? c.budget.guardrailId : null,
      keyHash: member ? null : c.entity.slice("key:".length),
      member: member ? c.entity.slice("member:".length) : null,
      spentMicros: spent[i] ?? 0,
      limitMicros: toMicros(c.budget.limitUsd),
      window: windowOfDay(c.budget.interval, windows[i]?.today ?? 0),
    } satisfies LimitReading;
  });
  const exhausted = await exhaustedEntities(
    deps.budgetRefusals,
    hook.workspaceId,
    readings,
    memberOf,
  );
  const due: DueAlert[] = [];
  readings.forEach((reading, i) => {
    due.push(...thresholdAlerts(hook.workspaceId, reading, [hook], now));
    const c = list[i]?.counter;
    if (c && exhausted.has(`${c.budget.guardrailId}/${c.entity}`))
      due.push(...exhaustedAlerts(hook.workspaceId, reading, [hook], now));
  });
  let queued = 0;
  // A threshold both lists hold (100%) has one once key: the second enqueue is refused.
  for (const a of due) {
    const [id] = await deps.webhooks.enqueue([toDelivery(a)], now);
    if (id) queued++;
  }
  if (queued > 0)
    log.info(
      { workspaceId: hook.workspaceId, queued },
      "budget alerts of thresholds crossed before the webhook queued",
    );
  return queued;
}

/**
 * The counters ("guardrail/entity") whose budget refused a request in its current window: a
 * key's own refusals, or for a member's counter the refusals of any key of that member.
 */
async function exhaustedEntities(
  refusals: BudgetRefusalsSince | undefined,
  workspaceId: string,
  readings: readonly LimitReading[],
  memberOf: ReadonlyMap<string, string>,
): Promise<Set<string>> {
  const out = new Set<string>();
  if (!refusals || readings.length === 0) return out;
  const starts = readings.map((r) => r.window.start?.getTime() ?? 0);
  try {
    const rows = await refusals(workspaceId, Math.min(...starts));
    readings.forEach((r, i) => {
      const start = starts[i] ?? 0;
      const hit = rows.some(
        (row) =>
          row.guardrailId === r.guardrailId &&
          row.atMs >= start &&
          (r.member === null ? row.keyHash === r.keyHash : memberOf.get(row.keyHash) === r.member),
      );
      if (hit)
        out.add(
          `${r.guardrailId}/${r.member === null ? `key:${r.keyHash}` : `member:${r.member}`}`,
        );
    });
  } catch (err) {
    // The thresholds still go out; only the refusals' part waits for the window's next refusal.
    log.warn({ err: String(err) }, "budget refusals not read for a webhook's catch-up");
  }
  return out;
}
