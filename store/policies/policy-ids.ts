import type { PolicyDoc } from "./types.js";

/** Every policy id a document holds (its workspace's policies and the account's). */
export function policyIdsOf(doc: PolicyDoc): string[] {
  return [...doc.policies.map((p) => p.id), ...(doc.accountPolicies ?? []).map((p) => p.id)];
}
