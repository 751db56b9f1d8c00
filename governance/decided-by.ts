import type { BudgetRefusal } from "../gen/railgate/speech/v1/speech_pb.js";

/**
 * Which guardrail (or guardrail policy) a refusal came from, beside the error that carries it
 * to the client (the error's shape and wording stay as they are): the request log records it,
 * so an operator can filter refused requests by what refused them. In-process only, by
 * identity: the decider is known where the decision is made, so recording it costs no read.
 */
export interface Decider {
  /** The id of the governing layer: a guardrail's, or a policy's (policy-guardrails.ts). */
  guardrailId: string;
  /** Set when that layer is a guardrail policy. */
  policy?: true;
}

const decidedBy = new WeakMap<object, Decider>();

/** Marks `err` as decided by `decider`; returns `err` for a throw. */
export function markDecidedBy<E extends object>(err: E, decider: Decider | undefined): E {
  if (decider?.guardrailId) decidedBy.set(err, decider);
  return err;
}

/** What decided `err`, when anything did. */
export function whatDecided(err: unknown): Decider | undefined {
  return typeof err === "object" && err !== null ? decidedBy.get(err) : undefined;
}

/** The guardrail that decided `err`, when one did. */
export function guardrailThatDecided(err: unknown): string | undefined {
  return whatDecided(err)?.guardrailId;
}

/** The guardrail policy that decided `err`, when one did. */
export function policyThatDecided(err: unknown): string | undefined {
  const d = whatDecided(err);
  return d?.policy ? d.guardrailId : undefined;
}

/** The decider named by a governing layer, a rule or a budget of it. */
export function deciderOf(
  layer: { guardrailId: string; policy?: true } | undefined,
): Decider | undefined {
  return layer && { guardrailId: layer.guardrailId, ...(layer.policy ? { policy: true } : {}) };
}

/**
 * The figures of a budget refusal, beside the error (as `decidedBy`): the request log keeps
 * them, so a record says whose budget refused with its spend and limit.
 */
const budgetFigures = new WeakMap<object, BudgetRefusal>();

/** Attaches the budget figures to `err`; returns `err` for a throw. */
export function markBudgetRefusal<E extends object>(err: E, figures: BudgetRefusal): E {
  budgetFigures.set(err, figures);
  return err;
}

/** The budget figures of `err`, when a budget refused. */
export function budgetRefusalOf(err: unknown): BudgetRefusal | undefined {
  return typeof err === "object" && err !== null ? budgetFigures.get(err) : undefined;
}
