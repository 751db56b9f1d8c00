import type { BudgetScopeName } from "../../domain/enums.js";
import type { BudgetSpec } from "./types.js";

/**
 * Which budget layer a counter is, named as OpenRouter's KeyBudgetScope: the
 * workspace default guardrail against the member's total and against this
 * key, the member's guardrail, the key's guardrail (the proto enum's names).
 */
export type BudgetScope = BudgetScopeName;

/** One spend counter a request is checked and charged against. */
export interface BudgetCounter {
  budget: BudgetSpec;
  scope: BudgetScope;
  /** Whose spend: `key:<hash>` or `member:<user id>`. */
  entity: string;
}

export function keyEntity(keyHash: string): string {
  return `key:${keyHash}`;
}

export function memberEntity(memberUserId: string): string {
  return `member:${memberUserId}`;
}

/**
 * Guardrail budgets are per entity, not pooled (OpenRouter's documented
 * behaviour): each key governed by a guardrail gets its own `limit_usd` per
 * window, and each member one for the total of their keys. The workspace
 * default guardrail is the maximum for every member and every key, so it
 * counts twice: against the key's member (when the key has one) and against
 * the key. Listed in the order OpenRouter checks them, so the first refusal
 * names the same layer. A guardrail that governs the key twice (assigned to
 * it and also the workspace default) has one counter per entity, charged once.
 */
export function budgetCounters(
  budgets: readonly BudgetSpec[],
  keyHash: string,
  memberUserId: string,
): BudgetCounter[] {
  const key = keyEntity(keyHash);
  const member = memberUserId ? memberEntity(memberUserId) : undefined;
  const out: BudgetCounter[] = [];
  const seen = new Set<string>();
  const add = (budget: BudgetSpec, scope: BudgetScope, entity: string) => {
    const id = `${budget.guardrailId}/${entity}`;
    if (seen.has(id)) return;
    seen.add(id);
    out.push({ budget, scope, entity });
  };
  const of = (source: BudgetSpec["source"]) => budgets.filter((b) => b.source === source);
  for (const b of of("workspace_default")) {
    if (member) add(b, "workspace_default_member", member);
    add(b, "workspace_default_key", key);
  }
  // A member guardrail governs only keys that have a member; the guard keeps that true here too.
  if (member) for (const b of of("member")) add(b, "member", member);
  for (const b of of("key")) add(b, "api_key", key);
  return out;
}
