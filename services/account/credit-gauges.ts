import type { CreditSample } from "../../domain/metrics.js";
import { fromMicros } from "../../governance/policy/money.js";
import { componentLogger } from "../../platform/observability/logger.js";
import type { Store } from "../../store/types.js";

const log = componentLogger("account-metrics");

const PAGE = 500;
/** Workspaces read at once: bounds the round trips in flight on the store. */
const PARALLEL_WORKSPACES = 8;

/**
 * Every metered workspace's credit balance and credits added, read from the store (never counted
 * in this process), so every replica reports the same numbers. Unmetered workspaces (no balance)
 * are left out: nothing is drawn from credits there, so "low" means nothing.
 */
export async function readCredits(store: Store): Promise<CreditSample[]> {
  const out: CreditSample[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.listWorkspaces(offset, PAGE);
    for (let i = 0; i < page.items.length; i += PARALLEL_WORKSPACES) {
      const batch = page.items.slice(i, i + PARALLEL_WORKSPACES);
      const samples = await Promise.all(
        batch.map(async (ws): Promise<CreditSample | undefined> => {
          const balance = await store.getCredits(ws.id);
          if (balance === undefined) return undefined;
          const added = await store.getCreditsAdded(ws.id);
          return {
            workspaceId: ws.id,
            balanceUsd: fromMicros(balance),
            addedUsd: fromMicros(added),
          };
        }),
      );
      for (const s of samples) if (s) out.push(s);
    }
    if (page.items.length === 0 || offset + page.items.length >= page.total) return out;
  }
}

/**
 * The reader the credit gauges call on every scrape: one store reading per `ttlMs`, shared by
 * concurrent scrapes; a failed reading is logged, reported as undefined (the gauges skip their
 * series) and remembered as long as a good one, as the guardrail budget gauges do.
 */
export function cachedCredits(
  store: Store,
  ttlMs: number,
): () => Promise<CreditSample[] | undefined> {
  let cached: { at: number; reading: Promise<CreditSample[] | undefined> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at >= ttlMs) {
      cached = {
        at: now,
        reading: readCredits(store).catch((err: unknown) => {
          log.warn({ err }, "credit gauges skipped: the store did not answer");
          return undefined;
        }),
      };
    }
    return cached.reading;
  };
}
