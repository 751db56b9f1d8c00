import { RESET_INTERVALS } from "../../domain/enums.js";
import type { BudgetRefusal, Generation } from "../../gen/railgate/speech/v1/speech_pb.js";
import { BOOLEAN, NUMBER, orNull, STRING, shapeOf } from "../openapi/spec-schema.js";

/** An amount in words: four significant digits under $1, cents from $1 up ($0.00839, $12.50). */
export function usdWords(amount: number): string {
  if (amount >= 1) return `$${amount.toFixed(2)}`;
  const digits = Number(amount.toPrecision(4)).toFixed(10);
  return `$${digits.replace(/0+$/, "").replace(/\.$/, "")}`;
}

const WINDOW_WORDS: Record<string, string> = {
  daily: "Daily",
  weekly: "Weekly",
  monthly: "Monthly",
};

/** "Daily budget of guardrail support-daily used up: $0.00839 of $0.01 spent (this API key)". */
function budgetWords(b: BudgetRefusal): string {
  const interval = RESET_INTERVALS.name(b.interval) ?? "daily";
  const owner = b.scope === "member" ? `member ${b.memberUserId}, all keys` : "this API key";
  return (
    `${WINDOW_WORDS[interval] ?? "Daily"} budget of ${b.policy ? "policy" : "guardrail"} ` +
    `${b.guardrailName || b.guardrailId} used up: ${usdWords(b.spentUsd)} of ` +
    `${usdWords(b.limitUsd)} spent (${owner}); this request could cost up to ${usdWords(b.requestUsd)}`
  );
}

/**
 * A refusal in words with its figures: a budget's from its figures, any other from the message
 * its client read; records kept before messages were recorded have only their reason.
 */
export function refusalSummary(g: Generation): string | null {
  if (!g.refusalReason) return null;
  if (g.budgetRefusal) return budgetWords(g.budgetRefusal);
  if (g.refusalMessage) return g.refusalMessage;
  const words = g.refusalReason.replace(/_/g, " ");
  return `Refused: ${words}`;
}

export function budgetRefusalToJson(b: BudgetRefusal | undefined) {
  if (!b) return null;
  return {
    guardrail_id: b.guardrailId,
    guardrail_name: b.guardrailName,
    policy: b.policy,
    interval: RESET_INTERVALS.name(b.interval) ?? null,
    scope: b.scope,
    member_user_id: b.memberUserId || null,
    spent_usd: b.spentUsd,
    limit_usd: b.limitUsd,
    request_usd: b.requestUsd,
  };
}

export const BUDGET_REFUSAL_SCHEMA = orNull(
  shapeOf<NonNullable<ReturnType<typeof budgetRefusalToJson>>>({
    guardrail_id: STRING,
    guardrail_name: STRING,
    policy: BOOLEAN,
    interval: orNull({ enum: RESET_INTERVALS.names }),
    scope: { enum: ["key", "member"] },
    member_user_id: orNull(STRING),
    spent_usd: NUMBER,
    limit_usd: NUMBER,
    request_usd: NUMBER,
  }),
);
