import type { JsonValue } from "@bufbuild/protobuf";
import { create, toJson } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, newId } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import { pageParams } from "../../domain/paging.js";
import { GuardrailCheckRunSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type AccountPolicyInput,
  type AccountPolicy as AccountPolicyMessage,
  AccountPolicySchema,
  type CreateAccountPolicyRequest,
  type DeleteAccountPolicyRequest,
  type GetAccountPolicyVersionRequest,
  type ListAccountPoliciesRequest,
  type ListAccountPolicyVersionsRequest,
  type RestoreAccountPolicyVersionRequest,
  type RunAccountPolicyChecksRequest,
  type SubjectList,
  type UpdateAccountPolicyRequest,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { type CheckContext, runSummary } from "../../governance/checks/run-checks.js";
import { quote } from "../../platform/quote.js";
import type { Clock } from "../../platform/time.js";
import { limitError } from "../../store/limits.js";
import {
  ACCOUNT_DOC,
  type AccountPolicy,
  coversWorkspace,
  type PolicyDocStore,
  type StoredPolicyShadow,
} from "../../store/policies/types.js";
import {
  type AuditEntry,
  changesBetween,
  type WrittenWith,
} from "../../store/request-log/audit-log.js";
import {
  ACCOUNT_POLICY_VERSIONS,
  insertPolicyVersion,
  markPolicyVersionsDeleted,
  type PolicyVersionRow,
  type PolicyVersions,
} from "../../store/request-log/policy-versions.js";
import type { Store } from "../../store/types.js";
import { accountShadowToProto } from "./account-shadow.js";
import {
  checkedChange,
  checksForAudit,
  checksOf,
  inputChecks,
  lastRunOf,
  refuseBudgetChecks,
  runPolicyChecks,
} from "./checks.js";
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
import { noPolicyShadow, shadowSummary, withoutShadow } from "./shadow.js";
import { accountVersionMessage, noted, restoredPolicy, versionNotFound } from "./versions.js";

const WORKSPACE_PAGE = 200;

/**
 * A workspace-wide policy with what its versions and checks keep on it, as workspace policies
 * have them (store/policies' StoredPolicy); absent on one stored before they existed.
 */
export interface VersionedAccountPolicy extends AccountPolicy {
  /** Its versions so far, counted in the same document write as each change. */
  revision?: number;
  checks?: JsonValue;
  lastCheckRun?: JsonValue;
}

/** Writes a change's audit event, with what the change does to the versions, before it is answered. */
export type RecordWith = (
  ctx: HandlerContext,
  entry: AuditEntry,
  writtenWith?: WrittenWith,
) => Promise<void>;

export function accountToProto(p: VersionedAccountPolicy): AccountPolicyMessage {
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
    checks: checksOf(p),
    lastCheckRun: lastRunOf(p),
    shadow: p.shadow && accountShadowToProto(p.shadow),
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
    private readonly recordWith: RecordWith,
    /** The versions reader; refuses without a database. */
    private readonly versionStore: () => Promise<PolicyVersions>,
    /** What running checks needs: the models and the account's settings. */
    private readonly checkContext: CheckContext,
    private readonly clock: Clock,
  ) {}

  /** The change made `p` what it is: its audit event, and `p` as its next version. */
  private recordVersion(ctx: HandlerContext, entry: AuditEntry, p: VersionedAccountPolicy) {
    const snapshot = {
      policyType: ACCOUNT_POLICY_VERSIONS,
      policyId: p.id,
      workspaceId: ACCOUNT_DOC,
      version: p.revision ?? 1,
      // A running shadow is no part of what the change made the policy.
      data: withoutShadow(p) as unknown as Record<string, unknown>,
    };
    return this.recordWith(ctx, entry, (tx, event) => insertPolicyVersion(tx, event, snapshot));
  }

  async stored(id: string): Promise<VersionedAccountPolicy | undefined> {
    if (!isUuid(id)) return undefined;
    const { doc } = await this.docs.read(ACCOUNT_DOC);
    return doc.accountPolicies?.find((p) => p.id === id);
  }

  /**
   * Replaces one policy in the account document by what `change` makes of it as stored (404 when
   * it is gone), decided again on the document read if another write came first.
   */
  editPolicy<T>(
    id: string,
    change: (
      stored: VersionedAccountPolicy,
    ) => Promise<{ next: VersionedAccountPolicy; result: T }>,
  ): Promise<T> {
    return editDoc(this.docs, ACCOUNT_DOC, async (doc) => {
      const all: VersionedAccountPolicy[] = doc.accountPolicies ?? [];
      const stored = all.find((p) => p.id === id) ?? policyNotFound("account", id);
      const { next, result } = await change(stored);
      return {
        doc: { ...doc, accountPolicies: all.map((p) => (p.id === id ? next : p)) },
        result,
      };
    });
  }

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
    const checks = inputChecks(type, input.checks);
    const lists = await this.workspaceLists(input);
    const now = this.clock.now();
    const policy: VersionedAccountPolicy = {
      id: newId(),
      policyType: type,
      name,
      config,
      isDefault: input.isDefault ?? false,
      workspaceIds: lists.workspaceIds ?? [],
      optedOutWorkspaceIds: lists.optedOutWorkspaceIds ?? [],
      createdAtMs: now,
      updatedAtMs: now,
      revision: 1,
      ...(checks ? { checks } : {}),
    };
    // A new policy has no earlier version its checks protect: they run and are kept.
    if (policy.checks !== undefined)
      policy.lastCheckRun = toJson(
        GuardrailCheckRunSchema,
        await runPolicyChecks(policy, this.checkContext),
      );
    await this.docs.index(policy.id, ACCOUNT_DOC);
    await editDoc(this.docs, ACCOUNT_DOC, async (doc) => {
      const existing = doc.accountPolicies ?? [];
      if (existing.length >= POLICIES_PER_WORKSPACE)
        throw limitError(
          `the account already has ${existing.length} workspace-wide policies (the maximum is ${POLICIES_PER_WORKSPACE}): delete one first`,
        );
      return { doc: { ...doc, accountPolicies: [...existing, policy] }, result: true };
    });
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.create",
        resource: { type: "guardrail_policy", id: policy.id, label: name },
        changes: changesBetween(null, { policy_type: type, ...accountAuditFields(policy) }),
      },
      policy,
    );
    return { policy: accountToProto(policy) };
  }

  /** A replace; `promotes` is the shadow whose change it is, which it ends in the same write. */
  async update(
    req: UpdateAccountPolicyRequest,
    ctx: HandlerContext,
    promotes?: StoredPolicyShadow,
  ) {
    const input = req.policy ?? fail("policy is required");
    const name = policyName(input.name);
    const lists = await this.workspaceLists(input);
    let before: VersionedAccountPolicy | undefined;
    let failing: string[] = [];
    const after = await this.editPolicy(req.id, async (stored) => {
      if (input.policyType && input.policyType !== stored.policyType)
        fail(`policy_type must stay "${stored.policyType}"`);
      if (promotes && stored.shadow?.startedAtMs !== promotes.startedAtMs)
        noPolicyShadow("account", req.id);
      before = stored;
      const next: VersionedAccountPolicy = {
        ...stored,
        name,
        config: checkedConfig(stored.policyType, input.config),
        isDefault: input.isDefault ?? stored.isDefault,
        workspaceIds: lists.workspaceIds ?? stored.workspaceIds,
        optedOutWorkspaceIds: lists.optedOutWorkspaceIds ?? stored.optedOutWorkspaceIds,
        updatedAtMs: this.clock.now(),
        revision: (stored.revision ?? 0) + 1,
      };
      const checks = inputChecks(stored.policyType, input.checks);
      if (checks === null) delete next.checks;
      else if (checks !== undefined) next.checks = checks;
      if (promotes) delete next.shadow;
      // Checks run on the policy the change leaves, each time it is decided again.
      failing = await checkedChange(next, req.force, this.checkContext);
      return { next, result: next };
    });
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.update",
        resource: { type: "guardrail_policy", id: req.id, label: name },
        changes: noted(
          {
            ...changesBetween(
              before ? accountAuditFields(before) : null,
              accountAuditFields(after),
            ),
            ...(promotes ? { shadow: { before: shadowSummary(promotes), after: null } } : {}),
          },
          failing,
        ),
      },
      after,
    );
    return { policy: accountToProto(after) };
  }

  /**
   * A proposed replace (a what-if's change) checked as update checks it, with the same messages,
   * and the live policy it would replace; nothing is written.
   */
  async checkedChange(id: string, input: AccountPolicyInput) {
    const name = policyName(input.name);
    const lists = await this.workspaceLists(input);
    const live = (await this.stored(id)) ?? policyNotFound("account", id);
    if (input.policyType && input.policyType !== live.policyType)
      fail(`policy_type must stay "${live.policyType}"`);
    const config = checkedConfig(live.policyType, input.config);
    inputChecks(live.policyType, input.checks);
    return { live, name, config, lists };
  }

  /** The budget policies of `workspaceIds` (each counts the requests a workspace-wide budget does). */
  async workspaceBudgets(workspaceIds: readonly string[]) {
    const out: { workspaceId: string; id: string; name: string }[] = [];
    for (const workspaceId of workspaceIds) {
      const { doc } = await this.docs.read(workspaceId);
      for (const p of doc.policies)
        if (p.policyType === "budget") out.push({ workspaceId, id: p.id, name: p.name });
    }
    return out;
  }

  /** The workspaces a workspace-wide policy covers now. */
  async covered(p: AccountPolicy): Promise<string[]> {
    if (!p.isDefault) return p.workspaceIds;
    const out: string[] = [];
    for (let offset = 0; ; ) {
      const page = await this.store.listWorkspaces(offset, WORKSPACE_PAGE);
      for (const w of page.items) if (coversWorkspace(p, w.id)) out.push(w.id);
      offset += page.items.length;
      if (page.items.length === 0 || offset >= page.total) return out;
    }
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
    // Its versions stay readable for the audit retention from now.
    await this.recordWith(
      ctx,
      {
        action: "guardrail_policy.delete",
        resource: { type: "guardrail_policy", id: req.id, label: removed.name },
        changes: changesBetween(accountAuditFields(removed), null),
      },
      (tx, event) => markPolicyVersionsDeleted(tx, ACCOUNT_POLICY_VERSIONS, req.id, event.at),
    );
    return { deleted: true };
  }

  /**
   * The policy's type: the live policy's, else its first version's (a deleted policy's versions
   * stay readable); 404 when it has neither.
   */
  private async typeOf(id: string, versions: PolicyVersions): Promise<string> {
    const live = await this.stored(id);
    if (live) return live.policyType;
    const range = isUuid(id) ? await versions.range(ACCOUNT_POLICY_VERSIONS, id) : undefined;
    const first = range && (await versions.get(ACCOUNT_POLICY_VERSIONS, id, range.first));
    return (first?.data?.policyType as string | undefined) ?? policyNotFound("account", id);
  }

  async listVersions(req: ListAccountPolicyVersionsRequest) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const versions = await this.versionStore();
    const type = await this.typeOf(req.policyId, versions);
    const page = await versions.list(ACCOUNT_POLICY_VERSIONS, req.policyId, offset, limit);
    return {
      versions: page.versions.map((v) => accountVersionMessage(v, type)),
      totalCount: page.total,
    };
  }

  private async version(id: string, n: number): Promise<PolicyVersionRow> {
    if (!Number.isSafeInteger(n) || n < 1) fail(`version must be a whole number from 1, got ${n}`);
    const versions = await this.versionStore();
    await this.typeOf(id, versions);
    const row = await versions.get(ACCOUNT_POLICY_VERSIONS, id, n);
    if (row) return row;
    const range = await versions.range(ACCOUNT_POLICY_VERSIONS, id);
    return versionNotFound("account", id, n, range);
  }

  async getVersion(req: GetAccountPolicyVersionRequest) {
    const row = await this.version(req.policyId, req.version);
    const data = row.data as unknown as VersionedAccountPolicy;
    return { version: accountVersionMessage(row, data.policyType, accountToProto(data)) };
  }

  /** A new version whose name and config (and checks) equal version n's, as one change. */
  async restoreVersion(req: RestoreAccountPolicyVersionRequest, ctx: HandlerContext) {
    // A deleted policy is not restored (its versions' snapshot makes a new one).
    if (!(await this.stored(req.policyId))) policyNotFound("account", req.policyId);
    const row = await this.version(req.policyId, req.version);
    const answer = await this.editPolicy(req.policyId, async (stored) => {
      const after = restoredPolicy(stored, row, this.clock.now());
      const failing = await checkedChange(after, req.force, this.checkContext);
      return { next: after, result: { before: stored, after, failing } };
    });
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.restore",
        resource: { type: "guardrail_policy", id: req.policyId, label: answer.after.name },
        changes: noted(
          changesBetween(accountAuditFields(answer.before), accountAuditFields(answer.after)),
          answer.failing,
          req.version,
        ),
      },
      answer.after,
    );
    return { policy: accountToProto(answer.after) };
  }

  /**
   * Runs the checks against the policy as it is and keeps the run on it (audited; no version:
   * its rule did not change).
   */
  async runChecks(req: RunAccountPolicyChecksRequest, ctx: HandlerContext) {
    const live = (await this.stored(req.policyId)) ?? policyNotFound("account", req.policyId);
    refuseBudgetChecks(live.policyType);
    const answer = await this.editPolicy(req.policyId, async (stored) => {
      const run = await runPolicyChecks(stored, this.checkContext);
      const after = { ...stored, lastCheckRun: toJson(GuardrailCheckRunSchema, run) };
      return { next: after, result: { run, before: stored } };
    });
    const before = lastRunOf(answer.before);
    await this.recordWith(ctx, {
      action: "guardrail_policy.checks_run",
      resource: { type: "guardrail_policy", id: req.policyId, label: answer.before.name },
      changes: {
        last_check_run: {
          before: before ? runSummary(before) : null,
          after: runSummary(answer.run),
        },
      },
    });
    return { run: answer.run };
  }
}

function accountAuditFields(p: VersionedAccountPolicy): Record<string, unknown> {
  return {
    name: p.name,
    config: p.config,
    is_default: p.isDefault,
    workspace_ids: p.workspaceIds,
    opted_out_workspace_ids: p.optedOutWorkspaceIds,
    checks: checksForAudit(p),
  };
}
