import { create, type JsonValue, toJson } from "@bufbuild/protobuf";
import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
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
import { shadowReportRows } from "../../store/request-log/shadow-rows.js";
import { replayTally, type SimulationDeps } from "./simulate.js";

/** How many affected generation ids a report names, as the what-if answer does. */
const SAMPLE_SIZE = 20;

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

/** A version has a budget when it sets a limit (its interval and BYOK rule go with it). */
function hasBudget(g: Readonly<Guardrail>): boolean {
  return g.limitUsd !== undefined;
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
    hasBudget(live) || hasBudget(proposed)
      ? replayTally(sim, deps.memberOf, live, proposed, fromMs, shadowEndMs(shadow, nowMs)).then(
          (t) => t.budget,
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
