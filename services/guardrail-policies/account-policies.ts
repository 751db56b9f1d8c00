import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, newId } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import { pageParams } from "../../domain/paging.js";
import {
  type AccountPolicyInput,
  type AccountPolicy as AccountPolicyMessage,
  AccountPolicySchema,
  type CreateAccountPolicyRequest,
  type DeleteAccountPolicyRequest,
  type ListAccountPoliciesRequest,
  type SubjectList,
  type UpdateAccountPolicyRequest,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { quote } from "../../platform/quote.js";
import type { Clock } from "../../platform/time.js";
import { limitError } from "../../store/limits.js";
import {
  ACCOUNT_DOC,
  type AccountPolicy,
  type PolicyDocStore,
} from "../../store/policies/types.js";
import { type AuditEntry, changesBetween } from "../../store/request-log/audit-log.js";
import type { Store } from "../../store/types.js";
import { checkedConfig } from "./config-rules.js";
import {
  editDoc,
  fail,
  POLICIES_PER_WORKSPACE,
  policyName,
  policyNotFound,
  policyType,
  subjects,
} from "./rules.js";

function accountToProto(p: AccountPolicy): AccountPolicyMessage {
  return create(AccountPolicySchema, {
    id: p.id,
    policyType: p.policyType,
    name: p.name,
    config: p.config as AccountPolicyMessage["config"],
    isDefault: p.isDefault,
    workspaceIds: p.workspaceIds,
    optedOutWorkspaceIds: p.optedOutWorkspaceIds,
    createdAt: timestampFromMs(p.createdAtMs),
    updatedAt: timestampFromMs(p.updatedAtMs),
  });
}

/**
 * The account's workspace-wide policies: one document (ACCOUNT_DOC) beside the workspaces',
 * changed by the same read-decide-write-if-unchanged step.
 */
export class AccountPolicies {
  constructor(
    private readonly docs: PolicyDocStore,
    private readonly store: Store,
    private readonly record: (ctx: HandlerContext, entry: AuditEntry) => void,
    private readonly clock: Clock,
  ) {}

  private async workspaceExists(workspaceId: string): Promise<boolean> {
    return (await this.store.getWorkspace(workspaceId)) !== undefined;
  }

  /** The workspace lists of an input (undefined: not sent), each naming an existing workspace. */
  private async workspaceLists(input: AccountPolicyInput) {
    const check = async (field: string, l: SubjectList | undefined) => {
      if (l === undefined) return undefined;
      const ids = subjects(field, l, LIMITS.subjectMax);
      for (const [i, id] of ids.entries())
        if (!isUuid(id) || !(await this.workspaceExists(id)))
          fail(`${field}[${i}] ${quote(id.slice(0, 80))} is not a workspace`);
      return ids;
    };
    return {
      workspaceIds: await check("workspace_ids", input.workspaceIds),
      optedOutWorkspaceIds: await check("opted_out_workspace_ids", input.optedOutWorkspaceIds),
    };
  }

  async list(req: ListAccountPoliciesRequest) {
    const type = req.policyType === undefined ? undefined : policyType(req.policyType);
    const { offset, limit } = pageParams(req.offset, req.limit);
    const { doc } = await this.docs.read(ACCOUNT_DOC);
    const all = (doc.accountPolicies ?? []).filter((p) => !type || p.policyType === type);
    return {
      policies: all.slice(offset, offset + limit).map((p) => accountToProto(p)),
      totalCount: all.length,
    };
  }

  async create(req: CreateAccountPolicyRequest, ctx: HandlerContext) {
    const input = req.policy ?? fail("policy is required");
    const type = policyType(input.policyType);
    const name = policyName(input.name);
    const config = checkedConfig(type, input.config);
    const lists = await this.workspaceLists(input);
    const now = this.clock.now();
    const policy: AccountPolicy = {
      id: newId(),
      policyType: type,
      name,
      config,
      isDefault: input.isDefault ?? false,
      workspaceIds: lists.workspaceIds ?? [],
      optedOutWorkspaceIds: lists.optedOutWorkspaceIds ?? [],
      createdAtMs: now,
      updatedAtMs: now,
    };
    await this.docs.index(policy.id, ACCOUNT_DOC);
    await editDoc(this.docs, ACCOUNT_DOC, async (doc) => {
      const existing = doc.accountPolicies ?? [];
      if (existing.length >= POLICIES_PER_WORKSPACE)
        throw limitError(
          `the account already has ${existing.length} workspace-wide policies (the maximum is ${POLICIES_PER_WORKSPACE}): delete one first`,
        );
      return { doc: { ...doc, accountPolicies: [...existing, policy] }, result: true };
    });
    this.record(ctx, {
      action: "guardrail_policy.create",
      resource: { type: "guardrail_policy", id: policy.id, label: name },
      changes: changesBetween(null, { policy_type: type, ...accountAuditFields(policy) }),
    });
    return { policy: accountToProto(policy) };
  }

  async update(req: UpdateAccountPolicyRequest, ctx: HandlerContext) {
    const input = req.policy ?? fail("policy is required");
    const name = policyName(input.name);
    const lists = await this.workspaceLists(input);
    let before: AccountPolicy | undefined;
    const after = await editDoc(this.docs, ACCOUNT_DOC, async (doc) => {
      const all = doc.accountPolicies ?? [];
      const stored = all.find((p) => p.id === req.id) ?? policyNotFound("account", req.id);
      if (input.policyType && input.policyType !== stored.policyType)
        fail(`policy_type must stay "${stored.policyType}"`);
      before = stored;
      const next: AccountPolicy = {
        ...stored,
        name,
        config: checkedConfig(stored.policyType, input.config),
        isDefault: input.isDefault ?? stored.isDefault,
        workspaceIds: lists.workspaceIds ?? stored.workspaceIds,
        optedOutWorkspaceIds: lists.optedOutWorkspaceIds ?? stored.optedOutWorkspaceIds,
        updatedAtMs: this.clock.now(),
      };
      return {
        doc: { ...doc, accountPolicies: all.map((p) => (p.id === req.id ? next : p)) },
        result: next,
      };
    });
    this.record(ctx, {
      action: "guardrail_policy.update",
      resource: { type: "guardrail_policy", id: req.id, label: name },
      changes: changesBetween(
        before ? accountAuditFields(before) : null,
        accountAuditFields(after),
      ),
    });
    return { policy: accountToProto(after) };
  }

  async delete(req: DeleteAccountPolicyRequest, ctx: HandlerContext) {
    const removed = await editDoc(this.docs, ACCOUNT_DOC, async (doc) => {
      const all = doc.accountPolicies ?? [];
      const stored = all.find((p) => p.id === req.id) ?? policyNotFound("account", req.id);
      return {
        doc: { ...doc, accountPolicies: all.filter((p) => p.id !== req.id) },
        result: stored,
      };
    });
    await this.docs.index(req.id, undefined);
    this.record(ctx, {
      action: "guardrail_policy.delete",
      resource: { type: "guardrail_policy", id: req.id, label: removed.name },
      changes: changesBetween(accountAuditFields(removed), null),
    });
    return { deleted: true };
  }
}

function accountAuditFields(p: AccountPolicy): Record<string, unknown> {
  return {
    name: p.name,
    config: p.config,
    is_default: p.isDefault,
    workspace_ids: p.workspaceIds,
    opted_out_workspace_ids: p.optedOutWorkspaceIds,
  };
}
