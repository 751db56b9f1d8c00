import { create, fromJson, type JsonValue } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { GuardrailShadowSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type AccountPolicyInput,
  AccountPolicyInputSchema,
  type AccountPolicyShadow,
  AccountPolicyShadowSchema,
  type GetAccountPolicyShadowResponse,
  GetAccountPolicyShadowResponseSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import {
  type GetGuardrailShadowResponse,
  ShadowBudgetReportSchema,
  type ShadowOutcomeCount,
  ShadowOutcomeCountSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type {
  ShadowFound,
  ShadowNotice,
  ShadowSource,
} from "../../governance/alerts/shadow-expiry.js";
import { policyAsGuardrail } from "../../governance/policy/policy-guardrails.js";
import type { AccountPolicy, StoredPolicyShadow } from "../../store/policies/types.js";
import { policyShadowData } from "./shadow-expiry.js";
import type { GuardrailWhatIf } from "./what-if.js";

/** A report names at most this many affected records, as a workspace policy's does. */
const SAMPLE_SIZE = 20;

/** A workspace-wide policy that runs (or ran until it expired) a shadow. */
export type ShadowedAccountPolicy = AccountPolicy & { shadow: StoredPolicyShadow };

/** The stored change as UpdateAccountPolicy takes it (a promote replays it as one). */
export function accountShadowChange(s: StoredPolicyShadow): AccountPolicyInput {
  return fromJson(AccountPolicyInputSchema, s.change as JsonValue);
}

export function accountShadowToProto(s: StoredPolicyShadow): AccountPolicyShadow {
  return create(AccountPolicyShadowSchema, {
    change: accountShadowChange(s),
    startedAt: timestampFromMs(s.startedAtMs),
    expiresAt: timestampFromMs(s.expiresAtMs),
  });
}

/** Counts of the same (live, shadow) outcome pair, added up across workspaces. */
function addedCounts(lists: readonly (readonly ShadowOutcomeCount[])[]): ShadowOutcomeCount[] {
  const sums = new Map<string, ShadowOutcomeCount>();
  for (const list of lists)
    for (const c of list) {
      const key = `${c.live}>${c.shadow}`;
      const sum = sums.get(key);
      if (sum) sum.count += c.count;
      else sums.set(key, create(ShadowOutcomeCountSchema, { ...c }));
    }
  return [...sums.values()].sort((a, b) =>
    b.count > a.count ? 1 : b.count < a.count ? -1 : a.live < b.live ? -1 : 1,
  );
}

function sampleOf(lists: readonly (readonly string[])[]): string[] {
  return lists.flat().slice(0, SAMPLE_SIZE);
}

/**
 * The shadow's report: each covered workspace's, as a workspace policy's shadow is reported there
 * (its records carrying the shadow outcome, its budget replayed per key and member of that
 * workspace as enforcement counts it), added up.
 */
export async function accountShadowReport(
  whatIf: GuardrailWhatIf | undefined,
  p: ShadowedAccountPolicy,
  workspaceIds: readonly string[],
  nowMs: number,
): Promise<GetAccountPolicyShadowResponse> {
  const shadow = create(GuardrailShadowSchema, {
    startedAt: timestampFromMs(p.shadow.startedAtMs),
    expiresAt: timestampFromMs(p.shadow.expiresAtMs),
  });
  const parts: GetGuardrailShadowResponse[] = [];
  // One after another: each report is a few queries, and the processes share their database.
  if (whatIf)
    for (const workspaceId of workspaceIds)
      parts.push(
        await whatIf.report(
          policyAsGuardrail({ ...p, workspaceId }),
          policyAsGuardrail({ ...p, name: p.shadow.name, config: p.shadow.config, workspaceId }),
          shadow,
          nowMs,
        ),
      );
  const budgets = parts.flatMap((r) => (r.budget ? [r.budget] : []));
  return create(GetAccountPolicyShadowResponseSchema, {
    shadow: accountShadowToProto(p.shadow),
    expired: p.shadow.expiresAtMs <= nowMs,
    outcomesChanged: parts.reduce((n, r) => n + r.outcomesChanged, 0n),
    changes: addedCounts(parts.map((r) => r.changes)),
    affectedGenerationIds: sampleOf(parts.map((r) => r.affectedGenerationIds)),
    budget: create(ShadowBudgetReportSchema, {
      outcomesChanged: budgets.reduce((n, b) => n + b.outcomesChanged, 0n),
      changes: addedCounts(budgets.map((b) => b.changes)),
      affectedGenerationIds: sampleOf(budgets.map((b) => b.affectedGenerationIds)),
    }),
    workspaceIds: [...workspaceIds],
  });
}

/**
 * Names the shadow and the workspace told of it: each covered workspace's webhooks get the
 * expiry once.
 */
function onceKeyOf(id: string, startedAtMs: number, workspaceId: string): string {
  return `account_policy_shadow_expired:${id}:${startedAtMs}:${workspaceId}`;
}

/**
 * An expired shadow of a workspace-wide policy as account_policy.shadow_expired announces it:
 * one notice per workspace the report counted, each carrying the whole report.
 */
export function accountShadowNotices(
  p: ShadowedAccountPolicy,
  r: GetAccountPolicyShadowResponse,
): ShadowNotice[] {
  const s = p.shadow;
  const data = policyShadowData(p, s, r);
  return r.workspaceIds.map((workspaceId) => ({
    type: "account_policy.shadow_expired" as const,
    workspaceId,
    onceKey: onceKeyOf(p.id, s.startedAtMs, workspaceId),
    expiresAtMs: s.expiresAtMs,
    expired: r.expired,
    data,
  }));
}

/** What the sweep reads of workspace-wide policies, through the policies service. */
export interface AccountShadowDeps {
  /** The workspace-wide policies that hold a shadow. */
  shadowed(): Promise<ShadowedAccountPolicy[]>;
  /** The workspaces a policy covers now. */
  covered(p: AccountPolicy): Promise<string[]>;
  /** The shadow's report as GET .../shadow answers it, and the policy as that read it. */
  report(
    id: string,
  ): Promise<{ answer: GetAccountPolicyShadowResponse; policy: ShadowedAccountPolicy }>;
}

/**
 * The workspace-wide policies' shadows, for the expiry sweep (governance/alerts/shadow-expiry.ts):
 * one found per covered workspace, whose report is read once per shadow and sweep.
 */
export function accountPolicyShadows(deps: AccountShadowDeps): ShadowSource {
  return {
    async scan(found) {
      for (const p of await deps.shadowed()) {
        const startedAtMs = p.shadow.startedAtMs;
        let notices: Promise<ShadowNotice[]> | undefined;
        const read = async () => {
          const { answer, policy } = await deps.report(p.id);
          // Replaced by a new shadow since the listing: that one is announced when it expires.
          if (policy.shadow.startedAtMs !== startedAtMs) return [];
          return accountShadowNotices(policy, answer);
        };
        for (const workspaceId of await deps.covered(p)) {
          const onceKey = onceKeyOf(p.id, startedAtMs, workspaceId);
          const one: ShadowFound = {
            workspaceId,
            onceKey,
            expiresAtMs: p.shadow.expiresAtMs,
            report: async () => {
              notices ??= read();
              return (await notices).find((n) => n.onceKey === onceKey);
            },
            logged: { policyId: p.id, policyType: "account" },
          };
          await found(one);
        }
      }
    },
  };
}
