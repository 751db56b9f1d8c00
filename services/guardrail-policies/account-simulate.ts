import { create } from "@bufbuild/protobuf";
import {
  type SimulateGuardrailResponse,
  UnreplayedRuleSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { policyAsGuardrail } from "../../governance/policy/policy-guardrails.js";
import type { AccountPolicy } from "../../store/policies/types.js";
import { namedUnderConfig, RULES_OF_TYPE, sameSet } from "./simulate.js";
import { mergeSimulations, type WorkspaceSimulation } from "./simulation-merge.js";
import type { GuardrailWhatIf } from "./what-if.js";

/** What a proposed replace of a workspace-wide policy changes: its settings and its coverage. */
export interface ProposedAccountPolicy {
  name: string;
  config: Record<string, unknown>;
  /** The coverage fields the change would set to something else than they are. */
  reassigned: string[];
}

/** A workspace budget policy that counts the same requests, by its workspace. */
export interface SiblingBudget {
  workspaceId: string;
  id: string;
  name: string;
}

/**
 * Replays, workspace by workspace, the requests a workspace-wide policy governed in
 * [fromMs, toMs) under the settings a replace would give it, and adds the answers up. Each
 * workspace is replayed on its own because enforcement counts it so: a workspace's requests are
 * admitted against that workspace's counters (the admission scope), so a budget's key and member
 * counters never span workspaces. A change of coverage is named, not replayed.
 */
export async function simulateAccountPolicy(
  replay: NonNullable<GuardrailWhatIf["replay"]>,
  /** A key's member user id in a workspace ("" for none). */
  memberOf: (workspaceId: string, keyHash: string) => Promise<string>,
  live: AccountPolicy,
  proposed: ProposedAccountPolicy,
  workspaceIds: readonly string[],
  /** The covered workspaces' own budget policies (a budget policy's replay names them). */
  siblings: readonly SiblingBudget[],
  fromMs: number,
  toMs: number,
): Promise<SimulateGuardrailResponse> {
  const parts: WorkspaceSimulation[] = [];
  const next = { ...live, name: proposed.name, config: proposed.config };
  // One after another: each replay is a few queries, and the processes share their database.
  for (const workspaceId of workspaceIds) {
    const answer = await replay.simulate(
      (hash) => memberOf(workspaceId, hash),
      policyAsGuardrail({ ...live, workspaceId }),
      policyAsGuardrail({ ...next, workspaceId }),
      fromMs,
      toMs,
      RULES_OF_TYPE[live.policyType],
      true,
    );
    parts.push({ workspaceId, answer });
  }
  const answer = mergeSimulations(fromMs, toMs, parts);
  namedUnderConfig(answer);
  for (const field of proposed.reassigned) {
    answer.notReplayed.push(
      create(UnreplayedRuleSchema, {
        field,
        reason:
          "which workspaces the policy covers is not replayed: the requests replayed are those it governed in the workspaces it covers now",
      }),
    );
  }
  for (const p of siblings) {
    answer.notReplayed.push(
      create(UnreplayedRuleSchema, {
        field: `workspace_policies[${p.id}]`,
        reason: `the budget policy "${p.name}" of workspace ${p.workspaceId} also counts these requests and is held as recorded: what it refused stays refused, what it admitted is admitted again`,
      }),
    );
  }
  return answer;
}

/** The coverage fields a replace would set to something else than the policy has. */
export function reassignedCoverage(
  p: AccountPolicy,
  lists: { workspaceIds?: string[]; optedOutWorkspaceIds?: string[] },
  isDefault: boolean | undefined,
): string[] {
  const differs = (sent: string[] | undefined, stored: string[]) =>
    sent !== undefined && !sameSet(sent, stored);
  return [
    ...(isDefault !== undefined && isDefault !== p.isDefault ? ["is_default"] : []),
    ...(differs(lists.workspaceIds, p.workspaceIds) ? ["workspace_ids"] : []),
    ...(differs(lists.optedOutWorkspaceIds, p.optedOutWorkspaceIds)
      ? ["opted_out_workspace_ids"]
      : []),
  ];
}
