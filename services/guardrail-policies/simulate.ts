import { create } from "@bufbuild/protobuf";
import {
  type SimulateGuardrailResponse,
  UnreplayedRuleSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { ReplayRule } from "../../governance/guardrail-replay.js";
import { policyAsGuardrail } from "../../governance/policy/policy-guardrails.js";
import {
  type AccountPolicy,
  coversWorkspace,
  type PolicyType,
  type StoredPolicy,
} from "../../store/policies/types.js";
import type { GuardrailWhatIf } from "./what-if.js";

/**
 * The rules a policy of each type can refuse by. A policy that replaced a guardrail's part keeps
 * the guardrail's id, and the guardrail still decides its other types under that id: a recorded
 * refusal by another type's rule is not this policy's to lift.
 */
export const RULES_OF_TYPE: Readonly<Record<PolicyType, ReadonlySet<ReplayRule>>> = {
  budget: new Set<ReplayRule>(["budget"]),
  model_availability: new Set<ReplayRule>(["model", "provider", "region", "zdr", "data_policy"]),
  moderation: new Set<ReplayRule>(["content"]),
};

/** What a proposed replace changes beside the settings: who the policy governs. */
export interface ProposedPolicy {
  name: string;
  config: Record<string, unknown>;
  /** The assignment fields the change would set to something else than they are. */
  reassigned: string[];
}

/**
 * Replays the requests a policy governed in [fromMs, toMs) under the settings a replace would
 * give it, by the guardrail what-if's replay (the policy as the guardrail holding exactly its
 * settings, as enforcement folds it): budgets by running spend per entity and window, model
 * availability from what each record holds. What the replay holds as recorded is named in
 * not_replayed: content filters where the records kept no replay data, a change of who the policy governs, and the
 * workspace-wide budget policies that count the same requests.
 */
export async function simulatePolicy(
  replay: NonNullable<GuardrailWhatIf["replay"]>,
  memberOf: (keyHash: string) => Promise<string>,
  live: StoredPolicy,
  proposed: ProposedPolicy,
  accountPolicies: readonly AccountPolicy[],
  fromMs: number,
  toMs: number,
): Promise<SimulateGuardrailResponse> {
  const current = policyAsGuardrail(live);
  const next = policyAsGuardrail({ ...live, name: proposed.name, config: proposed.config });
  const answer = await replay.simulate(
    memberOf,
    current,
    next,
    fromMs,
    toMs,
    RULES_OF_TYPE[live.policyType],
  );
  namedUnderConfig(answer);
  for (const field of proposed.reassigned) {
    answer.notReplayed.push(
      create(UnreplayedRuleSchema, {
        field,
        reason:
          "who the policy governs is not replayed: the requests replayed are those it governed as it was assigned",
      }),
    );
  }
  if (live.policyType === "budget") {
    for (const p of accountPolicies) {
      if (p.policyType !== "budget" || !coversWorkspace(p, live.workspaceId)) continue;
      answer.notReplayed.push(
        create(UnreplayedRuleSchema, {
          field: `account_policies[${p.id}]`,
          reason: `the workspace-wide budget policy "${p.name}" also counts these requests and is held as recorded: what it refused stays refused, what it admitted is admitted again`,
        }),
      );
    }
  }
  return answer;
}

/** A guardrail what-if's answer in a policy's words: its settings are under config. */
export function namedUnderConfig(answer: SimulateGuardrailResponse): void {
  for (const u of answer.notReplayed) u.field = `config.${u.field}`;
  for (const c of answer.contentReplay) c.field = `config.${c.field}`;
}

/** The same members, whatever their order. */
export function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}

/** The assignment fields a replace would set to something else than the policy has. */
export function reassignedFields(
  p: StoredPolicy,
  lists: {
    apiKeyHashes?: string[];
    memberIds?: string[];
    optedOutApiKeyHashes?: string[];
    optedOutMemberIds?: string[];
  },
  input: { isWorkspaceDefault?: boolean },
): string[] {
  const differs = (sent: string[] | undefined, stored: string[]) =>
    sent !== undefined && !sameSet(sent, stored);
  return [
    ...(differs(lists.apiKeyHashes, p.apiKeyHashes) ? ["api_key_hashes"] : []),
    ...(differs(lists.memberIds, p.memberIds) ? ["member_ids"] : []),
    ...(input.isWorkspaceDefault !== undefined && input.isWorkspaceDefault !== p.isWorkspaceDefault
      ? ["is_workspace_default"]
      : []),
    ...(differs(lists.optedOutApiKeyHashes, p.optedOutApiKeyHashes)
      ? ["opted_out_api_key_hashes"]
      : []),
    ...(differs(lists.optedOutMemberIds, p.optedOutMemberIds) ? ["opted_out_member_ids"] : []),
  ];
}
