import {
  managesType,
  type PolicyDoc,
  type PolicyDocStore,
  type PolicyType,
  type StoredPolicy,
} from "../../store/policies/types.js";
import type { Store } from "../../store/types.js";
import { mappedPolicies } from "./mapped.js";

export interface TakenOver {
  doc: PolicyDoc;
  /** The policies that replaced the guardrails' parts (none when the type was already managed). */
  replacements: StoredPolicy[];
}

/**
 * The workspace's document once it manages `type` through the policies API (OpenRouter's
 * migration: "once you edit a policy for a workspace, manage that policy type there from then
 * on"). The first write of a type turns each guardrail's part of it into a policy of the
 * workspace's own, with the guardrail's id, name, settings and assignments, so that what
 * governs each key is the same the moment after; from then on the guardrails no longer govern
 * the type (governance-cache.ts) and guardrail writes that would change it are refused.
 */
export async function takenOver(
  store: Store,
  docs: PolicyDocStore,
  doc: PolicyDoc,
  workspaceId: string,
  type: PolicyType,
  nowMs: number,
): Promise<TakenOver> {
  const moved = await asManaged(store, doc, workspaceId, type, nowMs);
  // Indexed before the document names them: an index entry whose write then failed reads as 404.
  for (const r of moved.replacements) await docs.index(r.id, workspaceId);
  return moved;
}

/**
 * The document as the first write of `type` would make it, written nowhere: what a read of an
 * assignment state answers before the move, so that the state a client reads is the state that
 * write then checks its `expected_assignment` against.
 */
export async function asManaged(
  store: Store,
  doc: PolicyDoc,
  workspaceId: string,
  type: PolicyType,
  nowMs: number,
): Promise<TakenOver> {
  if (managesType(doc, type)) return { doc, replacements: [] };
  const owned = new Set(doc.policies.map((p) => p.id));
  const replacements: StoredPolicy[] = (await mappedPolicies(store, workspaceId, type))
    .filter((m) => !owned.has(m.id))
    .map((m) => ({
      id: m.id,
      workspaceId,
      policyType: type,
      name: m.name,
      config: { ...(m.config ?? {}) },
      apiKeyHashes: [...m.apiKeyHashes],
      memberIds: [...m.memberIds],
      isWorkspaceDefault: m.isWorkspaceDefault,
      optedOutApiKeyHashes: [],
      optedOutMemberIds: [],
      updatedAtMs: nowMs,
      replacedLegacyGuardrailIds: [m.id],
      // Its create is its first version.
      revision: 1,
    }));
  return {
    doc: {
      ...doc,
      policies: [...doc.policies, ...replacements],
      managedTypes: [...(doc.managedTypes ?? []), type],
    },
    replacements,
  };
}
