import { fromMicros, toMicros } from "../../governance/policy/money.js";
import { IDEMPOTENCY_TTL_SECONDS } from "../../platform/idempotency.js";
import type { Store } from "../../store/types.js";

/**
 * Adds a top-up (negative: a correction) whose amount the request rules have checked. With an
 * idempotency id (the caller's Idempotency-Key) it applies once per id: a repeat reads the
 * balance and `applied` is false.
 */
export async function addCredits(
  store: Store,
  workspaceId: string,
  amountUsd: number,
  onceId?: string,
): Promise<{ balanceUsd: number; applied: boolean }> {
  if (onceId === undefined) {
    return {
      balanceUsd: fromMicros(await store.addCredits(workspaceId, toMicros(amountUsd))),
      applied: true,
    };
  }
  const once = await store.addCreditsOnce(
    workspaceId,
    toMicros(amountUsd),
    onceId,
    IDEMPOTENCY_TTL_SECONDS,
  );
  return { balanceUsd: fromMicros(once.balanceMicros), applied: once.applied };
}

/**
 * A workspace's credit totals: every credit ever added, and what they paid for (added less the
 * balance). An unmetered workspace has neither: nothing is drawn from credits there.
 */
export async function creditTotals(
  store: Store,
  workspaceId: string,
): Promise<{ balanceUsd?: number; totalCreditsUsd: number; totalUsageUsd: number }> {
  const balance = await store.getCredits(workspaceId);
  if (balance === undefined) return { totalCreditsUsd: 0, totalUsageUsd: 0 };
  const added = await store.getCreditsAdded(workspaceId);
  return {
    balanceUsd: fromMicros(balance),
    totalCreditsUsd: fromMicros(added),
    totalUsageUsd: fromMicros(added - balance),
  };
}

/** The organization's totals: the sum over every workspace (paged, so any number of them). */
export async function organizationCredits(
  store: Store,
): Promise<{ balanceUsd?: number; totalCreditsUsd: number; totalUsageUsd: number }> {
  const PAGE = 100;
  let balance: number | undefined;
  let added = 0;
  let usage = 0;
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.listWorkspaces(offset, PAGE);
    for (const ws of page.items) {
      const t = await creditTotals(store, ws.id);
      if (t.balanceUsd !== undefined) balance = (balance ?? 0) + t.balanceUsd;
      added += t.totalCreditsUsd;
      usage += t.totalUsageUsd;
    }
    if (page.items.length < PAGE) break;
  }
  return { balanceUsd: balance, totalCreditsUsd: added, totalUsageUsd: usage };
}
