import type { GuardrailBudgetSample } from "../../domain/metrics.js";
import { budgetWindow } from "../../domain/windows.js";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { budgetInterval } from "../../governance/policy/effective-policy.js";
import { fromMicros, toMicros } from "../../governance/policy/money.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { Store } from "../../store/types.js";

const log = componentLogger("guardrail-metrics");

/**
 * Long enough that scrapes from several Prometheus servers (or a burst of
 * manual ones) share one reading, short against any scrape interval.
 */
export const BUDGET_GAUGES_TTL_MS = 5_000;

const PAGE = 500;
/** Workspaces read at once: bounds the round trips in flight on the store. */
const PARALLEL_WORKSPACES = 8;

async function allPages<T>(
  list: (offset: number, limit: number) => Promise<{ items: T[]; total: number }>,
): Promise<T[]> {
  const out: T[] = [];
  for (;;) {
    const page = await list(out.length, PAGE);
    out.push(...page.items);
    if (page.items.length === 0 || out.length >= page.total) return out;
  }
}

async function workspaceSamples(
  store: Store,
  workspaceId: string,
  now: Date,
): Promise<GuardrailBudgetSample[]> {
  const guardrails = await allPages((o, l) => store.listGuardrails(workspaceId, o, l));
  const windowOf = (g: Guardrail) => budgetWindow(budgetInterval(g) ?? "daily", now);
  const spends = await store.getGuardrailSpend(
    workspaceId,
    guardrails.map((g) => {
      const w = windowOf(g);
      return { guardrailId: g.id, firstDay: w.firstDay, lastDay: w.today };
    }),
  );
  return guardrails.map((g, i) => {
    const spend = spends[i] ?? { keyMicros: 0, memberMicros: 0, maxEntityMicros: 0, entities: 0 };
    const sample: GuardrailBudgetSample = {
      workspaceId,
      guardrailId: g.id,
      keySpendUsd: fromMicros(spend.keyMicros),
      memberSpendUsd: fromMicros(spend.memberMicros),
      entities: spend.entities,
    };
    if (g.limitUsd !== undefined && budgetInterval(g)) {
      // The limit is per entity, so the tightest entity says how much room is left.
      const remaining = Math.max(0, toMicros(g.limitUsd) - spend.maxEntityMicros);
      sample.budget = { limitUsd: g.limitUsd, remainingUsd: fromMicros(remaining) };
    }
    return sample;
  });
}

/**
 * Every guardrail's spend in its current window, read from the store (never
 * counted in this process), so every replica reports the same numbers. A
 * guardrail without a limit is charged nothing: it reports what its counters
 * hold for the current UTC day (spend from earlier today, while it had one).
 */
export async function readGuardrailBudgets(
  store: Store,
  now = new Date(),
): Promise<GuardrailBudgetSample[]> {
  const workspaces = await allPages((o, l) => store.listWorkspaces(o, l));
  const out: GuardrailBudgetSample[] = [];
  for (let i = 0; i < workspaces.length; i += PARALLEL_WORKSPACES) {
    const batch = workspaces.slice(i, i + PARALLEL_WORKSPACES);
    const samples = await Promise.all(batch.map((ws) => workspaceSamples(store, ws.id, now)));
    out.push(...samples.flat());
  }
  return out;
}

/**
 * The reader the guardrail gauges call on every scrape: one store reading per
 * `ttlMs`, shared by concurrent scrapes. A failed reading is logged and
 * reported as undefined (the gauges skip their series, the rest of /metrics is
 * served) and is remembered as long as a good one, so a store that is down is
 * not asked again by every scrape.
 */
export function cachedGuardrailBudgets(
  store: Store,
  ttlMs = BUDGET_GAUGES_TTL_MS,
  /** Admission's clock: the windows read are the ones it charges. */
  clock: Clock = systemClock,
): () => Promise<GuardrailBudgetSample[] | undefined> {
  let cached: { at: number; reading: Promise<GuardrailBudgetSample[] | undefined> } | undefined;
  return () => {
    const now = Date.now();
    if (!cached || now - cached.at >= ttlMs) {
      cached = {
        at: now,
        reading: readGuardrailBudgets(store, new Date(clock.now())).catch((err: unknown) => {
          log.warn({ err }, "guardrail budget gauges skipped: the store did not answer");
          return undefined;
        }),
      };
    }
    return cached.reading;
  };
}
