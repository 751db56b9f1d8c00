import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import { budgetWindow, type WindowInterval } from "../../domain/windows.js";
import {
  type Guardrail,
  GuardrailInputSchema,
  type GuardrailShadow,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GetGuardrailShadowResponse,
  GetGuardrailShadowResponseSchema,
  ShadowBudgetReportSchema,
  ShadowOutcomeCountSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { budgetInterval } from "../../governance/policy/effective-policy.js";
import { recordsSince, shadowReportRows } from "../../store/request-log/shadow-rows.js";
import { type BudgetDifferences, replayTally, type SimulationDeps } from "./simulate.js";

/** How many affected generation ids a report names, as the what-if answer does. */
const SAMPLE_SIZE = 20;
const DAY_MS = 86_400_000;

/** A shadow as its audit event shows it: the change and how long it runs. */
export function shadowSummary(shadow: GuardrailShadow | undefined): JsonValue {
  if (!shadow?.change) return null;
  return {
    change: toJson(GuardrailInputSchema, shadow.change),
    update_mask: shadow.updateMask,
    expires_at: shadow.expiresAt ? timestampDate(shadow.expiresAt).toISOString() : null,
  };
}

export function shadowExpired(shadow: GuardrailShadow, nowMs: number): boolean {
  return !shadow.expiresAt || timestampMs(shadow.expiresAt) <= nowMs;
}

/** What a report reads beside the guardrail: the request log and what a replay decides by. */
export interface ShadowReportDeps {
  /** Absent without the request-log database: the report holds the shadow alone. */
  simulation?: SimulationDeps;
  /** A key's member user id ("" for none), by key hash. */
  memberOf: (keyHash: string) => Promise<string>;
}

/** A version's budget window (its interval), when it has a budget: a limit and an interval. */
function budgetOf(g: Readonly<Guardrail>): WindowInterval | undefined {
  return g.limitUsd === undefined ? undefined : budgetInterval(g as Guardrail);
}

/** The most ids of budget differences read before those older than the shadow are left out. */
const BUDGET_SAMPLE_READ = 2_000;

/**
 * The differences the shadow version's budget makes on the records in [fromMs, toMs). Its
 * counters hold, at the shadow's start, the spend of the window it started in: the replay runs
 * from that window's start (as if the version had decided the whole window), and what it
 * decided differently before the start is taken away. A replay decides each record from the
 * ones before it alone, so the replay up to the start decides those records exactly as the
 * longer one does.
 */
async function budgetDifferences(
  deps: ShadowReportDeps & { simulation: SimulationDeps },
  live: Readonly<Guardrail>,
  proposed: Guardrail,
  fromMs: number,
  toMs: number,
): Promise<BudgetDifferences> {
  const sim = deps.simulation;
  const interval = budgetOf(proposed);
  const oldest = toMs - sim.retentionDays * DAY_MS;
  const windowStartMs = interval
    ? Math.max(budgetWindow(interval, new Date(fromMs)).start.getTime(), oldest)
    : fromMs;
  if (windowStartMs >= fromMs)
    return (await replayTally(sim, deps.memberOf, live, proposed, fromMs, toMs)).budget;
  const before = (await replayTally(sim, deps.memberOf, live, proposed, windowStartMs, fromMs, 0))
    .budget;
  const earlier = [...before.changes.values()].reduce((n, c) => n + c, 0);
  const all = (
    await replayTally(
      sim,
      deps.memberOf,
      live,
      proposed,
      windowStartMs,
      toMs,
      Math.min(earlier + SAMPLE_SIZE, BUDGET_SAMPLE_READ),
    )
  ).budget;
  const changes = new Map<string, number>();
  for (const [change, n] of all.changes) {
    const left = n - (before.changes.get(change) ?? 0);
    if (left > 0) changes.set(change, left);
  }
  const since = await recordsSince(sim.database, live.workspaceId, all.sample, fromMs);
  return { changes, sample: all.sample.filter((id) => since.has(id)).slice(0, SAMPLE_SIZE) };
}

/**
 * The shadow with what it would have changed since it started: the rules decided per request
 * counted from the request log's records that carry this guardrail's shadow outcome, and its
 * budget replayed from the records now (admission checks a budget in its own script, and a
 * shadow adds nothing to the hot path), with the what-if replay's running spend per entity and
 * window, so an early refusal leaves room for a later request.
 */
export async function shadowReport(
  deps: ShadowReportDeps,
  live: Readonly<Guardrail>,
  proposed: Guardrail,
  shadow: GuardrailShadow,
  nowMs: number,
): Promise<GetGuardrailShadowResponse> {
  const answer = create(GetGuardrailShadowResponseSchema, {
    shadow,
    expired: shadowExpired(shadow, nowMs),
    budget: create(ShadowBudgetReportSchema),
  });
  const sim = deps.simulation;
  if (!sim || !shadow.startedAt) return answer;
  const fromMs = timestampMs(shadow.startedAt);
  const [rows, budget] = await Promise.all([
    shadowReportRows(sim.database, live.workspaceId, live.id, fromMs, SAMPLE_SIZE),
    budgetOf(live) || budgetOf(proposed)
      ? budgetDifferences(
          { ...deps, simulation: sim },
          live,
          proposed,
          fromMs,
          shadowEndMs(shadow, nowMs),
        )
      : undefined,
  ]);
  answer.changes = rows.changes.map((c) =>
    create(ShadowOutcomeCountSchema, { ...c, count: BigInt(c.count) }),
  );
  answer.outcomesChanged = BigInt(rows.changes.reduce((n, c) => n + c.count, 0));
  answer.affectedGenerationIds = rows.sample;
  if (budget) {
    const changes = [...budget.changes.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    answer.budget = create(ShadowBudgetReportSchema, {
      outcomesChanged: BigInt(changes.reduce((n, [, count]) => n + count, 0)),
      changes: changes.map(([change, count]) => {
        const [live = "", shadow = ""] = change.split(">");
        return create(ShadowOutcomeCountSchema, { live, shadow, count: BigInt(count) });
      }),
      affectedGenerationIds: budget.sample,
    });
  }
  return answer;
}

/** Where a shadow's replay ends: now, or when it expired. */
function shadowEndMs(shadow: GuardrailShadow, nowMs: number): number {
  // One millisecond past the last instant, so a record made as the report is asked counts.
  const end = nowMs + 1;
  return shadow.expiresAt ? Math.min(timestampMs(shadow.expiresAt), end) : end;
}
