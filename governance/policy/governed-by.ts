import type { EffectivePolicy } from "./types.js";

/** The record's governed_by of a policy, made once per policy object (the cache's entry lives as long). */
const labels = new WeakMap<EffectivePolicy, string[]>();

/**
 * "<source>:<guardrail id>" of each guardrail that governs a request, in precedence order: the
 * request log keeps it so a what-if replay finds the records a guardrail governed, and whose
 * budget (key or member) each counted in.
 */
export function governedBy(policy: EffectivePolicy): string[] {
  let out = labels.get(policy);
  if (!out) {
    out = policy.guardrails.map((g) => `${g.source}:${g.guardrail.id}`);
    labels.set(policy, out);
  }
  return out;
}
