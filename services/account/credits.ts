import { fromMicros } from "../../governance/policy/money.js";
import type { Store } from "../../store/types.js";

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
