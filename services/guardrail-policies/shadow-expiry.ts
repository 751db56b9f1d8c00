import type { GetGuardrailPolicyShadowResponse } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import {
  type ShadowNotice,
  type ShadowReportCounts,
  type ShadowSource,
  shadowExpiredData,
} from "../../governance/alerts/shadow-expiry.js";
import type { PolicyType, StoredPolicy, StoredPolicyShadow } from "../../store/policies/types.js";
import type { Page } from "../../store/types.js";

const PAGE = 500;
/** Fields of a PUT body that name the policy rather than change it. */
const NOT_WRITTEN = new Set(["policy_type", "workspace_id"]);

/** What the sweep reads of policies: each workspace's document, through the policies service. */
export interface PolicyShadowDeps {
  /** Every workspace, a page at a time (the store's listing). */
  listWorkspaces(offset: number, limit: number): Promise<Page<{ id: string }>>;
  /** The workspace's policies that hold a shadow, as its document does. */
  shadowedPolicies(workspaceId: string): Promise<StoredPolicy[]>;
  /** The shadow's report as GET .../shadow answers it, and the policy as that read it. */
  report(
    type: PolicyType,
    id: string,
  ): Promise<{ answer: GetGuardrailPolicyShadowResponse; policy: StoredPolicy }>;
}

/**
 * Names the shadow by its policy's type too: the policies that took over one guardrail's parts
 * keep its id, one per type.
 */
function onceKeyOf(p: StoredPolicy, startedAtMs: number): string {
  return `policy_shadow_expired:${p.policyType}:${p.id}:${startedAtMs}`;
}

/**
 * The PUT body's fields the change holds (a PUT replaces those it names, name and config always),
 * a workspace policy's or a workspace-wide one's.
 */
export function writtenFields(change: unknown): string[] {
  if (typeof change !== "object" || change === null) return [];
  return Object.keys(change).filter((k) => !NOT_WRITTEN.has(k));
}

/** A policy shadow's report as guardrail_policy.shadow_expired announces it. */
export function policyShadowNotice(
  p: StoredPolicy,
  r: GetGuardrailPolicyShadowResponse,
): ShadowNotice | undefined {
  const s = p.shadow;
  if (!s) return undefined;
  return {
    type: "guardrail_policy.shadow_expired",
    workspaceId: p.workspaceId,
    onceKey: onceKeyOf(p, s.startedAtMs),
    expiresAtMs: s.expiresAtMs,
    expired: r.expired,
    data: policyShadowData(p, s, r),
  };
}

/** What a policy shadow's expiry says, a workspace policy's or a workspace-wide one's. */
export function policyShadowData(
  p: { id: string; policyType: PolicyType },
  s: StoredPolicyShadow,
  r: ShadowReportCounts,
) {
  return {
    policy_id: p.id,
    policy_type: p.policyType,
    shadow: shadowExpiredData(r, {
      updateMask: writtenFields(s.change),
      startedAt: new Date(s.startedAtMs),
      expiresAt: new Date(s.expiresAtMs),
    }),
  };
}

/** Every workspace's policy shadows, for the expiry sweep (governance/alerts/shadow-expiry.ts). */
export function policyShadows(deps: PolicyShadowDeps): ShadowSource {
  return {
    async scan(found) {
      for (let offset = 0; ; offset += PAGE) {
        const page = await deps.listWorkspaces(offset, PAGE);
        for (const ws of page.items) {
          for (const p of await deps.shadowedPolicies(ws.id)) {
            if (!p.shadow) continue;
            const startedAtMs = p.shadow.startedAtMs;
            await found({
              workspaceId: p.workspaceId,
              onceKey: onceKeyOf(p, startedAtMs),
              expiresAtMs: p.shadow.expiresAtMs,
              report: async () => {
                const { answer, policy } = await deps.report(p.policyType, p.id);
                // Replaced by a new shadow since the listing: that one is announced when it expires.
                if (policy.shadow?.startedAtMs !== startedAtMs) return undefined;
                return policyShadowNotice(policy, answer);
              },
              logged: { policyId: p.id, policyType: p.policyType },
            });
          }
        }
        if (page.items.length < PAGE) return;
      }
    },
  };
}
