import type { BudgetRefusal } from "../gen/railgate/speech/v1/speech_pb.js";

/**
 * Which guardrail a refusal came from, beside the error that carries it to the client (the
 * error's shape and wording stay as they are): the request log records it, so an operator can
 * filter refused requests by the guardrail that refused them. In-process only, by identity.
 */
const decidedBy = new WeakMap<object, string>();

/** Marks `err` as decided by the guardrail `guardrailId`; returns `err` for a throw. */
export function markDecidedBy<E extends object>(err: E, guardrailId: string | undefined): E {
  if (guardrailId) decidedBy.set(err, guardrailId);
  return err;
}

/** The guardrail that decided `err`, when one did. */
export function guardrailThatDecided(err: unknown): string | undefined {
  return typeof err === "object" && err !== null ? decidedBy.get(err) : undefined;
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
