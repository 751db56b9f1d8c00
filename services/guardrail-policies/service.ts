import { create, toJson } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { auditOrigin } from "../../domain/audit.js";
import { isUuid, newId } from "../../domain/ids.js";
import { GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import { pageParams } from "../../domain/paging.js";
import { shadowExpiry } from "../../domain/shadow-expiry.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { GuardrailCheckRunSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type ChangePolicyAssignmentRequest,
  type CreateAccountPolicyRequest,
  type CreateGuardrailPolicyRequest,
  type DeleteAccountPolicyRequest,
  type DeleteGuardrailPolicyRequest,
  type EndAccountPolicyShadowRequest,
  type EndGuardrailPolicyShadowRequest,
  type GetAccountPolicyShadowRequest,
  type GetAccountPolicyVersionRequest,
  type GetGuardrailPolicyRequest,
  type GetGuardrailPolicyShadowRequest,
  type GetGuardrailPolicyShadowResponse,
  GetGuardrailPolicyShadowResponseSchema,
  type GetGuardrailPolicyVersionRequest,
  type GetPolicyAssignmentRequest,
  type GuardrailPolicy,
  type GuardrailPolicyInput,
  GuardrailPolicyInputSchema,
  GuardrailPolicySchema,
  type GuardrailPolicyService,
  type ListAccountPoliciesRequest,
  type ListAccountPolicyVersionsRequest,
  type ListGuardrailPoliciesRequest,
  type ListGuardrailPolicyVersionsRequest,
  PolicyAssignmentStateSchema,
  type PromoteAccountPolicyShadowRequest,
  type PromoteGuardrailPolicyShadowRequest,
  type RestoreAccountPolicyVersionRequest,
  type RestoreGuardrailPolicyVersionRequest,
  type RunAccountPolicyChecksRequest,
  type RunGuardrailPolicyChecksRequest,
  type SimulateAccountPolicyRequest,
  type SimulateGuardrailPolicyRequest,
  type StartAccountPolicyShadowRequest,
  type StartGuardrailPolicyShadowRequest,
  type SubjectList,
  type UpdateAccountPolicyRequest,
  type UpdateGuardrailPolicyRequest,
  UpdateGuardrailPolicyRequestSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { type CheckContext, runSummary } from "../../governance/checks/run-checks.js";
import { quote } from "../../platform/quote.js";
import {
  conflict,
  failedPrecondition,
  invalidArgument,
  notFound,
  withReason,
} from "../../platform/rpc/errors.js";
import type { Clock } from "../../platform/time.js";
import { systemClock } from "../../platform/time.js";
import { limitError } from "../../store/limits.js";
import {
  assignmentState,
  changedAssignment,
  overridden,
  sameState,
} from "../../store/policies/policy-doc.js";
import {
  ACCOUNT_DOC,
  managesType,
  type PolicyDoc,
  type PolicyDocStore,
  type PolicyType,
  type StoredPolicy,
  type StoredPolicyShadow,
  type SubjectKind,
} from "../../store/policies/types.js";
import {
  type AuditEntry,
  type AuditLog,
  changesBetween,
  type WrittenWith,
} from "../../store/request-log/audit-log.js";
import {
  insertPolicyVersion,
  markPolicyVersionsDeleted,
  type PolicyVersionRow,
  type PolicyVersions,
} from "../../store/request-log/policy-versions.js";
import { isDatabaseUnavailable } from "../../store/request-log/unavailable.js";
import type { Store } from "../../store/types.js";
import { AccountPolicies } from "./account-policies.js";
import { AccountPolicyShadows, type AccountShadowOptions } from "./account-shadows.js";
import { reassignedCoverage, simulateAccountPolicy } from "./account-simulate.js";
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
import { mappedPolicies } from "./mapped.js";
import {
  editDoc,
  fail,
  POLICIES_PER_WORKSPACE,
  policyName,
  policyNotFound,
  policyType,
  subjects,
} from "./rules.js";
import {
  checkNoRunningShadow,
  noPolicyShadow,
  policyShadowReport,
  shadowChange,
  shadowSummary,
  shadowToProto,
  storedShadow,
  withoutShadow,
} from "./shadow.js";
import { reassignedFields, simulatePolicy } from "./simulate.js";
import { asManaged, takenOver } from "./takeover.js";
import {
  mappedHasNoHistory,
  noted,
  restoredPolicy,
  versionMessage,
  versionNotFound,
} from "./versions.js";
import type { GuardrailWhatIf } from "./what-if.js";

/** What the audit log records of a policy. */
function auditFields(p: StoredPolicy): Record<string, unknown> {
  return {
    name: p.name,
    config: p.config,
    api_key_hashes: p.apiKeyHashes,
    member_ids: p.memberIds,
    is_workspace_default: p.isWorkspaceDefault,
    opted_out_api_key_hashes: p.optedOutApiKeyHashes,
    opted_out_member_ids: p.optedOutMemberIds,
    ...(p.replacedLegacyGuardrailIds
      ? { replaced_legacy_guardrail_ids: p.replacedLegacyGuardrailIds }
      : {}),
    checks: checksForAudit(p),
  };
}

export interface GuardrailPolicyServiceOptions {
  /** A policy's versions (the database's); absent without one. */
  versions?: PolicyVersions;
  /** What running checks needs: the models and the account's settings. */
  checks: CheckContext;
  /** The guardrail what-if and shadow report a policy's are computed by. */
  whatIf?: GuardrailWhatIf;
  /** A report found its shadow expired (its webhook event is due, unless already queued). */
  shadowExpired?: (policy: StoredPolicy, report: GetGuardrailPolicyShadowResponse) => void;
  /** The same, for a workspace-wide policy's shadow. */
  accountShadowExpired?: AccountShadowOptions["shadowExpired"];
}

/**
 * Guardrail policies over the store's policy documents (store/policies): each workspace's
 * policies are one document, so every rule that spans policies (one default per type, one
 * direct policy per subject and type, an expected assignment) is decided on one consistent
 * read and written only if that read is still current.
 */
export class GuardrailPolicyServiceImpl implements ServiceImpl<typeof GuardrailPolicyService> {
  private readonly docs: PolicyDocStore;
  private readonly account: AccountPolicies;
  /** Shadows of workspace-wide policies (the expiry sweep reads them too). */
  readonly accountShadows: AccountPolicyShadows;

  constructor(
    private readonly store: Store,
    private readonly audit: AuditLog | undefined,
    private readonly options: GuardrailPolicyServiceOptions,
    private readonly clock: Clock = systemClock,
  ) {
    this.docs = store.openPolicyDocs();
    this.account = new AccountPolicies(
      this.docs,
      store,
      (ctx, entry, writtenWith) => this.recordWith(ctx, entry, writtenWith),
      () => this.versionStore(),
      options.checks,
      clock,
    );
    this.accountShadows = new AccountPolicyShadows(
      this.docs,
      this.account,
      (ctx, entry, writtenWith) => this.recordWith(ctx, entry, writtenWith),
      {
        whatIf: options.whatIf,
        shadowExpired: options.accountShadowExpired,
        unavailableAsRetry,
      },
    );
  }

  private record(ctx: HandlerContext, entry: AuditEntry): void {
    this.audit?.record(auditOrigin(ctx), entry);
  }

  /**
   * Records a change that makes (or ends) versions: its audit event and what it does to the
   * versions go to the database in one transaction, before the change is answered.
   */
  private async recordWith(
    ctx: HandlerContext,
    entry: AuditEntry,
    writtenWith?: WrittenWith,
  ): Promise<void> {
    await this.audit?.recordDurably(auditOrigin(ctx), entry, new Date(), writtenWith);
  }

  /** The change made `p` what it is: its audit event, and `p` as its next version. */
  private recordVersion(ctx: HandlerContext, entry: AuditEntry, p: StoredPolicy): Promise<void> {
    const snapshot = {
      policyType: p.policyType,
      policyId: p.id,
      workspaceId: p.workspaceId,
      version: p.revision ?? 1,
      // A running shadow is no part of what the change made the policy.
      data: withoutShadow(p) as unknown as Record<string, unknown>,
    };
    return this.recordWith(ctx, entry, (tx, event) => insertPolicyVersion(tx, event, snapshot));
  }

  private toProto(doc: PolicyDoc, p: StoredPolicy): GuardrailPolicy {
    return create(GuardrailPolicySchema, {
      id: p.id,
      workspaceId: p.workspaceId,
      policyType: p.policyType,
      name: p.name,
      config: p.config as GuardrailPolicy["config"],
      apiKeyHashes: p.apiKeyHashes,
      memberIds: p.memberIds,
      isWorkspaceDefault: p.isWorkspaceDefault,
      optedOutApiKeyHashes: p.optedOutApiKeyHashes,
      optedOutMemberIds: p.optedOutMemberIds,
      overriddenApiKeyHashes: overridden(doc, p, "api_key"),
      overriddenMemberIds: overridden(doc, p, "member"),
      updatedAt: timestampFromMs(p.updatedAtMs),
      replacedLegacyGuardrailIds: p.replacedLegacyGuardrailIds ?? [],
      checks: checksOf(p),
      lastCheckRun: lastRunOf(p),
      shadow: p.shadow && shadowToProto(p.shadow),
    });
  }

  /**
   * `doc` once the workspace manages `type` here (takeover.ts): every policies-API write of a
   * type is one. The policies that replaced guardrail parts are recorded in the audit log.
   */
  private async managing(doc: PolicyDoc, workspaceId: string, type: PolicyType) {
    return takenOver(this.store, this.docs, doc, workspaceId, type, this.clock.now());
  }

  private async recordReplacements(
    ctx: HandlerContext,
    replacements: StoredPolicy[],
  ): Promise<void> {
    for (const p of replacements) {
      await this.recordVersion(
        ctx,
        {
          action: "guardrail_policy.create",
          resource: { type: "guardrail_policy", id: p.id, label: p.name },
          workspaceId: p.workspaceId,
          changes: changesBetween(null, { policy_type: p.policyType, ...auditFields(p) }),
        },
        p,
      );
    }
  }

  private edit<T>(
    workspaceId: string,
    change: (doc: PolicyDoc) => Promise<{ doc: PolicyDoc | null; result: T }>,
  ): Promise<T> {
    return editDoc(this.docs, workspaceId, change);
  }

  private async workspaceExists(workspaceId: string): Promise<boolean> {
    return (await this.store.getWorkspace(workspaceId)) !== undefined;
  }

  /** Every key hash must name a key of the policy's workspace. */
  private async checkKeys(field: string, hashes: string[], workspaceId: string): Promise<void> {
    for (const [i, hash] of hashes.entries()) {
      if ((await this.store.keyScope(hash)) !== workspaceId)
        fail(`${field}[${i}] is not an API key of workspace ${workspaceId}`);
    }
  }

  /** The stored policy of that type and id, with its workspace's document; 404 otherwise. */
  private async find(
    type: PolicyType,
    id: string,
  ): Promise<{ doc: PolicyDoc; policy: StoredPolicy; workspaceId: string }> {
    if (!isUuid(id)) policyNotFound(type, id);
    const workspaceId = await this.docs.workspaceOf(id);
    if (!workspaceId) policyNotFound(type, id);
    const { doc } = await this.docs.read(workspaceId);
    const policy = doc.policies.find((p) => p.id === id && p.policyType === type);
    if (!policy) policyNotFound(type, id);
    return { doc, policy, workspaceId };
  }

  async listGuardrailPolicies(req: ListGuardrailPoliciesRequest) {
    const type = policyType(req.policyType);
    const { offset, limit } = pageParams(req.offset, req.limit);
    if (req.workspaceId !== undefined && !isUuid(req.workspaceId))
      fail(`workspace_id must be a lowercase UUID, got ${quote(req.workspaceId.slice(0, 80))}`);
    const workspaceId = req.workspaceId ?? (await this.store.defaultWorkspaceId());
    const { doc } = workspaceId ? await this.docs.read(workspaceId) : { doc: { policies: [] } };
    const own = doc.policies.filter((p) => p.policyType === type).map((p) => this.toProto(doc, p));
    // Once the workspace manages the type here, its guardrails' parts are policies of its own.
    const mapped =
      workspaceId && !managesType(doc, type)
        ? await mappedPolicies(this.store, workspaceId, type)
        : [];
    const all = [...own, ...mapped];
    return { policies: all.slice(offset, offset + limit), totalCount: all.length };
  }

  async createGuardrailPolicy(req: CreateGuardrailPolicyRequest, ctx: HandlerContext) {
    const input = req.policy ?? fail("policy is required");
    const type = policyType(input.policyType);
    const name = policyName(input.name);
    const config = checkedConfig(type, input.config);
    const checks = inputChecks(type, input.checks);
    const workspaceId = input.workspaceId ?? (await this.store.defaultWorkspaceId()) ?? "";
    if (!(await this.workspaceExists(workspaceId)))
      fail(`workspace_id ${quote(workspaceId)} does not exist`);
    const lists = await this.inputLists(input, workspaceId);
    const id = newId();
    const policy: StoredPolicy = {
      id,
      workspaceId,
      policyType: type,
      name,
      config,
      apiKeyHashes: lists.apiKeyHashes ?? [],
      memberIds: lists.memberIds ?? [],
      isWorkspaceDefault: input.isWorkspaceDefault ?? false,
      optedOutApiKeyHashes: lists.optedOutApiKeyHashes ?? [],
      optedOutMemberIds: lists.optedOutMemberIds ?? [],
      updatedAtMs: this.clock.now(),
      revision: 1,
      ...(checks ? { checks } : {}),
    };
    // A new policy has no earlier version its checks protect: they run and are kept.
    if (policy.checks !== undefined)
      policy.lastCheckRun = toJson(
        GuardrailCheckRunSchema,
        await runPolicyChecks(policy, this.options.checks),
      );
    // Indexed first: an index entry whose write then failed points at nothing, which reads as 404.
    await this.docs.index(id, workspaceId);
    const { doc, replacements } = await this.edit(workspaceId, async (read) => {
      const { doc, replacements } = await this.managing(read, workspaceId, type);
      // Every policy of a workspace is one document: bounded as its guardrails are.
      if (doc.policies.length >= POLICIES_PER_WORKSPACE)
        throw limitError(
          `workspace ${workspaceId} already has ${doc.policies.length} guardrail policies (the maximum is ${POLICIES_PER_WORKSPACE}): delete one first`,
        );
      const next = placed(doc, policy);
      return { doc: next, result: { doc: next, replacements } };
    });
    await this.recordReplacements(ctx, replacements);
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.create",
        resource: { type: "guardrail_policy", id, label: name },
        workspaceId,
        changes: changesBetween(null, { policy_type: type, ...auditFields(policy) }),
      },
      policy,
    );
    return { policy: this.toProto(doc, policy) };
  }

  /** The subject lists an input sets (undefined: not sent), checked against the workspace. */
  private async inputLists(input: GuardrailPolicyInput, workspaceId: string) {
    const list = (field: string, l: SubjectList | undefined, max: number) =>
      l === undefined ? undefined : subjects(field, l, max);
    const apiKeyHashes = list("api_key_hashes", input.apiKeyHashes, LIMITS.subjectMax);
    const memberIds = list("member_ids", input.memberIds, LIMITS.subjectMax);
    const optedOutApiKeyHashes = list(
      "opted_out_api_key_hashes",
      input.optedOutApiKeyHashes,
      LIMITS.subjectMax,
    );
    const optedOutMemberIds = list(
      "opted_out_member_ids",
      input.optedOutMemberIds,
      LIMITS.subjectMax,
    );
    await this.checkKeys("api_key_hashes", apiKeyHashes ?? [], workspaceId);
    await this.checkKeys("opted_out_api_key_hashes", optedOutApiKeyHashes ?? [], workspaceId);
    return { apiKeyHashes, memberIds, optedOutApiKeyHashes, optedOutMemberIds };
  }

  /** The read-only policy of that type a guardrail with this id maps to, if any. */
  private async mapped(type: PolicyType, id: string): Promise<GuardrailPolicy | undefined> {
    if (!isUuid(id)) return undefined;
    const workspaceId = await this.store.guardrailWorkspace(id);
    if (!workspaceId) return undefined;
    if (managesType((await this.docs.read(workspaceId)).doc, type)) return undefined;
    return (await mappedPolicies(this.store, workspaceId, type)).find((p) => p.id === id);
  }

  /** The workspace of an owned policy, or of the guardrail a mapped policy is the view of; 404 otherwise. */
  private async workspaceOfPolicy(type: PolicyType, id: string): Promise<string> {
    const mapped = await this.mapped(type, id);
    if (mapped) return mapped.workspaceId;
    return (await this.find(type, id)).workspaceId;
  }

  async getGuardrailPolicy(req: GetGuardrailPolicyRequest) {
    const type = policyType(req.policyType);
    const mapped = await this.mapped(type, req.id);
    if (mapped) return { policy: mapped };
    const { doc, policy } = await this.find(type, req.id);
    return { policy: this.toProto(doc, policy) };
  }

  /** A replace's input checked as UpdateGuardrailPolicy checks it (same rules, same messages). */
  private async checkedReplace(id: string, input: GuardrailPolicyInput) {
    const type = policyType(input.policyType);
    const name = policyName(input.name);
    const config = checkedConfig(type, input.config);
    const checks = inputChecks(type, input.checks);
    const workspaceId = await this.workspaceOfPolicy(type, id);
    if (input.workspaceId !== undefined && input.workspaceId !== workspaceId)
      policyNotFound(type, id);
    if ((input.apiKeyHashes === undefined) !== (input.memberIds === undefined))
      fail(
        "api_key_hashes and member_ids are sent together (the complete new lists) or both omitted",
      );
    const lists = await this.inputLists(input, workspaceId);
    return { type, name, config, checks, workspaceId, lists };
  }

  async updateGuardrailPolicy(req: UpdateGuardrailPolicyRequest, ctx: HandlerContext) {
    return this.replace(req, ctx);
  }

  /** A replace; `promotes` is the shadow whose change it is, which it ends in the same write. */
  private async replace(
    req: UpdateGuardrailPolicyRequest,
    ctx: HandlerContext,
    promotes?: StoredPolicyShadow,
  ) {
    const input = req.policy ?? fail("policy is required");
    const { type, name, config, checks, workspaceId, lists } = await this.checkedReplace(
      req.id,
      input,
    );
    let before: StoredPolicy | undefined;
    const answer = await this.edit(workspaceId, async (read) => {
      // Editing a mapped policy is what moves its type here: it is then a policy of the workspace.
      const { doc, replacements } = await this.managing(read, workspaceId, type);
      const stored = doc.policies.find((p) => p.id === req.id && p.policyType === type);
      if (!stored) policyNotFound(type, req.id);
      if (promotes && stored.shadow?.startedAtMs !== promotes.startedAtMs)
        noPolicyShadow(type, req.id);
      before = stored;
      const after: StoredPolicy = {
        ...stored,
        name,
        config,
        apiKeyHashes: lists.apiKeyHashes ?? stored.apiKeyHashes,
        memberIds: lists.memberIds ?? stored.memberIds,
        isWorkspaceDefault: input.isWorkspaceDefault ?? stored.isWorkspaceDefault,
        optedOutApiKeyHashes: lists.optedOutApiKeyHashes ?? stored.optedOutApiKeyHashes,
        optedOutMemberIds: lists.optedOutMemberIds ?? stored.optedOutMemberIds,
        updatedAtMs: this.clock.now(),
        revision: (stored.revision ?? 0) + 1,
      };
      if (checks === null) delete after.checks;
      else if (checks !== undefined) after.checks = checks;
      if (promotes) delete after.shadow;
      // Checks run on the policy the change leaves, each time it is decided again.
      const failing = await checkedChange(after, req.force, this.options.checks);
      const next = placed(doc, after);
      return { doc: next, result: { doc: next, after, replacements, failing } };
    });
    await this.recordReplacements(ctx, answer.replacements);
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.update",
        resource: { type: "guardrail_policy", id: req.id, label: name },
        workspaceId,
        changes: noted(
          {
            ...changesBetween(before ? auditFields(before) : null, auditFields(answer.after)),
            ...(promotes ? { shadow: { before: shadowSummary(promotes), after: null } } : {}),
          },
          answer.failing,
        ),
      },
      answer.after,
    );
    return { policy: this.toProto(answer.doc, answer.after) };
  }

  async deleteGuardrailPolicy(req: DeleteGuardrailPolicyRequest, ctx: HandlerContext) {
    const type = policyType(req.policyType);
    const workspaceId = await this.workspaceOfPolicy(type, req.id);
    const { policy, replacements } = await this.edit(workspaceId, async (read) => {
      const { doc, replacements } = await this.managing(read, workspaceId, type);
      const policy = doc.policies.find((p) => p.id === req.id && p.policyType === type);
      if (!policy) policyNotFound(type, req.id);
      const policies = doc.policies.filter((p) => p.id !== req.id);
      return { doc: { ...doc, policies }, result: { policy, replacements } };
    });
    await this.recordReplacements(
      ctx,
      replacements.filter((p) => p.id !== req.id),
    );
    await this.docs.index(req.id, undefined);
    // Its versions stay readable for the audit retention from now.
    await this.recordWith(
      ctx,
      {
        action: "guardrail_policy.delete",
        resource: { type: "guardrail_policy", id: req.id, label: policy.name },
        workspaceId,
        changes: changesBetween({ policy_type: type, ...auditFields(policy) }, null),
      },
      (tx, event) => markPolicyVersionsDeleted(tx, type, req.id, event.at),
    );
    return { deleted: true };
  }

  /**
   * The subject of an assignment call and its workspace: a key of the workspace (else 404) or a
   * member id. Without workspace_id, the default workspace (OpenRouter's organization key names
   * one; Railgate's management key has the default, as the guardrails API does).
   */
  private async subjectOf(req: {
    subjectKind: string;
    subject: string;
    workspaceId: string;
  }): Promise<{ kind: SubjectKind; workspaceId: string }> {
    const workspaceId = req.workspaceId || ((await this.store.defaultWorkspaceId()) ?? "");
    if (!(await this.workspaceExists(workspaceId)))
      throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(workspaceId)} not found`);
    if (req.subjectKind === "api_key") {
      if ((await this.store.keyScope(req.subject)) !== workspaceId)
        throw notFound(
          ErrorReason.KEY_NOT_FOUND,
          `API key ${quote(req.subject.slice(0, 80))} not found in workspace ${workspaceId}`,
        );
      return { kind: "api_key", workspaceId };
    }
    if (req.subjectKind === "member") {
      if (req.subject.trim().length === 0 || req.subject.length > LIMITS.subjectMax)
        fail(`member id must be 1 to ${LIMITS.subjectMax} characters`);
      return { kind: "member", workspaceId };
    }
    return fail(`subject_kind must be "api_key" or "member"`);
  }

  async getPolicyAssignment(req: GetPolicyAssignmentRequest) {
    const type = policyType(req.policyType);
    const { kind, workspaceId } = await this.subjectOf(req);
    const read = (await this.docs.read(workspaceId)).doc;
    // While guardrails still govern the type, the state names their mapped policies: what governs
    // the subject, and what a first change of the type will find.
    const { doc } = await asManaged(this.store, read, workspaceId, type, this.clock.now());
    return {
      state: create(PolicyAssignmentStateSchema, assignmentState(doc, type, kind, req.subject)),
    };
  }

  async changePolicyAssignment(req: ChangePolicyAssignmentRequest, ctx: HandlerContext) {
    const type = policyType(req.policyType);
    if (!req.expectedAssignment) fail("expected_assignment is required");
    const expected = req.expectedAssignment;
    const { kind, workspaceId } = await this.subjectOf(req);
    const nowMs = this.clock.now();
    const { changed, replacements } = await this.edit(workspaceId, async (read) => {
      const { doc, replacements } = await this.managing(read, workspaceId, type);
      const policy = doc.policies.find((p) => p.id === req.policyId && p.policyType === type);
      if (!policy) policyNotFound(type, req.policyId);
      const stored = assignmentState(doc, type, kind, req.subject);
      if (!sameState(stored, expected)) {
        throw conflict(
          ErrorReason.UPDATE_CONFLICT,
          `expected_assignment no longer matches the stored assignment ${JSON.stringify({
            opted_out: stored.optedOut,
            policy_ids: stored.policyIds,
            workspace_default_policy_ids: stored.workspaceDefaultPolicyIds,
          })}: read it again`,
        );
      }
      const next = changedAssignment(doc, policy, kind, req.subject, req.assigned, nowMs);
      const differs = next.policies.some((p, i) => p !== doc.policies[i]);
      // A takeover is a change of its own, even when the assignment was already so.
      const write = differs || replacements.length > 0 || doc !== read;
      return { doc: write ? next : null, result: { changed: differs, replacements } };
    });
    await this.recordReplacements(ctx, replacements);
    if (changed) {
      this.record(ctx, {
        action: req.assigned ? "guardrail_policy.assign" : "guardrail_policy.unassign",
        resource: { type: "guardrail_policy", id: req.policyId },
        workspaceId,
        changes: changesBetween(null, { [kind]: req.subject }),
      });
    }
    return { changed };
  }

  /**
   * A policy of the workspace's own, for a what-if or a shadow. A mapped policy is the view of a
   * guardrail, whose records and shadow are the guardrail's: its change is tried there.
   */
  private async ownPolicy(type: PolicyType, id: string) {
    if (await this.mapped(type, id))
      fail(
        `${type} policy ${quote(id)} is the view of guardrail ${id} (is_legacy_mapped): try the change on the guardrail, /api/v1/guardrails/${id}/simulate or /shadow`,
      );
    return this.find(type, id);
  }

  /** The change of a what-if or a shadow: the input a replace takes, of the path's type. */
  private changeOf(type: PolicyType, change: GuardrailPolicyInput | undefined) {
    const input = change ?? fail("change is required (the body a PUT takes)");
    return create(GuardrailPolicyInputSchema, { ...input, policyType: type });
  }

  /**
   * Replays the requests the policy governed under the settings the change would give it (the
   * change checked as a replace is), writing nothing.
   */
  async simulateGuardrailPolicy(req: SimulateGuardrailPolicyRequest) {
    const type = policyType(req.policyType);
    const input = this.changeOf(type, req.change);
    const { name, config, lists } = await this.checkedReplace(req.id, input);
    const { policy } = await this.ownPolicy(type, req.id);
    const replay =
      this.options.whatIf?.replay ??
      storeUnavailable("this process runs without the request-log database");
    const window = replay.window(Date.now(), msOf(req.from), msOf(req.to));
    if ("error" in window) throw invalidArgument(window.error);
    const account = (await this.docs.read(ACCOUNT_DOC)).doc.accountPolicies ?? [];
    const memberOf = async (hash: string) =>
      (await this.store.getKey(policy.workspaceId, hash))?.memberUserId ?? "";
    const proposed = { name, config, reassigned: reassignedFields(policy, lists, input) };
    const simulation = await simulatePolicy(
      replay,
      memberOf,
      policy,
      proposed,
      account,
      window.fromMs,
      window.toMs,
    ).catch(unavailableAsRetry);
    return { simulation };
  }

  /**
   * Starts deciding a proposed replace beside the live policy: the change is checked as a
   * replace is, and the settings it leaves are kept with the shadow (a later replace of the
   * live policy does not move them).
   */
  async startGuardrailPolicyShadow(req: StartGuardrailPolicyShadowRequest, ctx: HandlerContext) {
    const type = policyType(req.policyType);
    const input = this.changeOf(type, req.change);
    const { name, config, workspaceId } = await this.checkedReplace(req.id, input);
    await this.ownPolicy(type, req.id);
    // Requests compare a shadow's expiry with the wall clock, so it is set by the same.
    const nowMs = Date.now();
    shadowExpiry(msOf(req.expiresAt), nowMs);
    const expiresAtMs = msOf(req.expiresAt) ?? nowMs;
    const started = await this.edit(workspaceId, async (doc) => {
      const stored = doc.policies.find((p) => p.id === req.id && p.policyType === type);
      if (!stored) policyNotFound(type, req.id);
      checkNoRunningShadow(type, stored, nowMs);
      const shadow = storedShadow(
        GuardrailPolicyInputSchema,
        input,
        { name, config },
        nowMs,
        expiresAtMs,
      );
      return {
        doc: placed(doc, { ...stored, shadow }),
        result: { before: stored.shadow, shadow, label: stored.name },
      };
    });
    // Written before the answer, as a change's event is.
    await this.recordWith(ctx, {
      action: "guardrail_policy.shadow_start",
      resource: { type: "guardrail_policy", id: req.id, label: started.label },
      workspaceId,
      changes: {
        shadow: { before: shadowSummary(started.before), after: shadowSummary(started.shadow) },
      },
    });
    return { shadow: shadowToProto(started.shadow) };
  }

  /** The shadow and what it would have changed since it started (an expired one says so). */
  async getGuardrailPolicyShadow(req: GetGuardrailPolicyShadowRequest) {
    const { answer, policy } = await this.shadowReportOf(policyType(req.policyType), req.id);
    // Whoever notices an expiry first announces it: this read, or the control plane's sweep.
    if (answer.expired) this.options.shadowExpired?.(policy, answer);
    return answer;
  }

  /** A policy's shadow report, and the policy as read (for the expiry's event). */
  async shadowReportOf(type: PolicyType, id: string) {
    const { policy } = await this.find(type, id);
    const shadow = policy.shadow ?? noPolicyShadow(type, id);
    const running = { ...policy, shadow };
    const answer = this.options.whatIf
      ? await policyShadowReport(this.options.whatIf, running, Date.now()).catch(unavailableAsRetry)
      : create(GetGuardrailPolicyShadowResponseSchema, {
          shadow: shadowToProto(shadow),
          expired: shadow.expiresAtMs <= Date.now(),
        });
    return { answer, policy: running };
  }

  /** The workspace's policies that run (or ran until they expired) a shadow: the expiry sweep's read. */
  async shadowedPolicies(workspaceId: string): Promise<StoredPolicy[]> {
    const { doc } = await this.docs.read(workspaceId);
    return doc.policies.filter((p) => p.shadow !== undefined);
  }

  /** Applies the shadow's change as a replace and ends the shadow in the same write. */
  async promoteGuardrailPolicyShadow(
    req: PromoteGuardrailPolicyShadowRequest,
    ctx: HandlerContext,
  ) {
    const type = policyType(req.policyType);
    const { policy } = await this.find(type, req.id);
    const shadow = policy.shadow ?? noPolicyShadow(type, req.id);
    const update = create(UpdateGuardrailPolicyRequestSchema, {
      id: req.id,
      policy: { ...shadowChange(shadow), policyType: type },
      force: req.force,
    });
    return this.replace(update, ctx, shadow);
  }

  async endGuardrailPolicyShadow(req: EndGuardrailPolicyShadowRequest, ctx: HandlerContext) {
    const type = policyType(req.policyType);
    const { workspaceId } = await this.find(type, req.id);
    const ended = await this.edit(workspaceId, async (doc) => {
      const stored = doc.policies.find((p) => p.id === req.id && p.policyType === type);
      if (!stored) policyNotFound(type, req.id);
      const shadow = stored.shadow ?? noPolicyShadow(type, req.id);
      const { shadow: _ended, ...rest } = stored;
      return { doc: placed(doc, rest), result: { shadow, label: stored.name } };
    });
    // Written before the answer, as a change's event is.
    await this.recordWith(ctx, {
      action: "guardrail_policy.shadow_end",
      resource: { type: "guardrail_policy", id: req.id, label: ended.label },
      workspaceId,
      changes: { shadow: { before: shadowSummary(ended.shadow), after: null } },
    });
    return { ended: true };
  }

  listAccountPolicies(req: ListAccountPoliciesRequest) {
    return this.account.list(req);
  }

  createAccountPolicy(req: CreateAccountPolicyRequest, ctx: HandlerContext) {
    return this.account.create(req, ctx);
  }

  updateAccountPolicy(req: UpdateAccountPolicyRequest, ctx: HandlerContext) {
    return this.account.update(req, ctx);
  }

  deleteAccountPolicy(req: DeleteAccountPolicyRequest, ctx: HandlerContext) {
    return this.account.delete(req, ctx);
  }

  listAccountPolicyVersions(req: ListAccountPolicyVersionsRequest) {
    return this.account.listVersions(req);
  }

  getAccountPolicyVersion(req: GetAccountPolicyVersionRequest) {
    return this.account.getVersion(req);
  }

  restoreAccountPolicyVersion(req: RestoreAccountPolicyVersionRequest, ctx: HandlerContext) {
    return this.account.restoreVersion(req, ctx);
  }

  runAccountPolicyChecks(req: RunAccountPolicyChecksRequest, ctx: HandlerContext) {
    return this.account.runChecks(req, ctx);
  }

  /**
   * Replays, in each workspace a workspace-wide policy covers, the requests it governed under
   * the settings the change would give it (the change checked as a replace is), writing nothing.
   */
  async simulateAccountPolicy(req: SimulateAccountPolicyRequest) {
    const input = req.change ?? fail("change is required (the body a PUT takes)");
    const { live, name, config, lists } = await this.account.checkedChange(req.id, input);
    const replay =
      this.options.whatIf?.replay ??
      storeUnavailable("this process runs without the request-log database");
    const window = replay.window(Date.now(), msOf(req.from), msOf(req.to));
    if ("error" in window) throw invalidArgument(window.error);
    const memberOf = async (workspaceId: string, hash: string) =>
      (await this.store.getKey(workspaceId, hash))?.memberUserId ?? "";
    const reassigned = reassignedCoverage(live, lists, input.isDefault);
    const covered = await this.account.covered(live);
    const siblings =
      live.policyType === "budget" ? await this.account.workspaceBudgets(covered) : [];
    const simulation = await simulateAccountPolicy(
      replay,
      memberOf,
      live,
      { name, config, reassigned },
      covered,
      siblings,
      window.fromMs,
      window.toMs,
    ).catch(unavailableAsRetry);
    return { simulation };
  }

  startAccountPolicyShadow(req: StartAccountPolicyShadowRequest, ctx: HandlerContext) {
    return this.accountShadows.start(req, ctx);
  }

  getAccountPolicyShadow(req: GetAccountPolicyShadowRequest) {
    return this.accountShadows.get(req);
  }

  promoteAccountPolicyShadow(req: PromoteAccountPolicyShadowRequest, ctx: HandlerContext) {
    return this.accountShadows.promote(req, ctx);
  }

  endAccountPolicyShadow(req: EndAccountPolicyShadowRequest, ctx: HandlerContext) {
    return this.accountShadows.end(req, ctx);
  }

  /** The versions reader, or 400 when this process has no database to keep them. */
  private async versionStore(): Promise<PolicyVersions> {
    if (!this.options.versions)
      throw failedPrecondition("policy versions are kept in the database, which is not configured");
    // What this process still holds (a write the database did not take at once) is read too.
    await this.audit?.written();
    return this.options.versions;
  }

  /**
   * 400 for a mapped policy (its history is its guardrail's); else 404 unless the policy exists
   * or has versions (a deleted one's stay readable for the audit retention).
   */
  private async knownPolicy(type: PolicyType, id: string, versions: number): Promise<void> {
    if (await this.mapped(type, id)) mappedHasNoHistory(type, id);
    if (versions === 0) await this.find(type, id);
  }

  async listGuardrailPolicyVersions(req: ListGuardrailPolicyVersionsRequest) {
    const type = policyType(req.policyType);
    const { offset, limit } = pageParams(req.offset, req.limit);
    const page = await (await this.versionStore()).list(type, req.policyId, offset, limit);
    await this.knownPolicy(type, req.policyId, page.total);
    return { versions: page.versions.map((v) => versionMessage(v)), totalCount: page.total };
  }

  private async version(type: PolicyType, id: string, n: number): Promise<PolicyVersionRow> {
    if (!Number.isSafeInteger(n) || n < 1) fail(`version must be a whole number from 1, got ${n}`);
    const versions = await this.versionStore();
    const row = await versions.get(type, id, n);
    if (row) return row;
    const range = await versions.range(type, id);
    await this.knownPolicy(type, id, range ? 1 : 0);
    return versionNotFound(type, id, n, range);
  }

  async getGuardrailPolicyVersion(req: GetGuardrailPolicyVersionRequest) {
    const type = policyType(req.policyType);
    const row = await this.version(type, req.policyId, req.version);
    return { version: versionMessage(row, (p) => this.toProto({ policies: [] }, p)) };
  }

  /**
   * A new version whose rule (name, config, checks) equals version n's, as one change: the
   * checks, n's own, run on the policy it leaves and must pass unless forced.
   */
  async restoreGuardrailPolicyVersion(
    req: RestoreGuardrailPolicyVersionRequest,
    ctx: HandlerContext,
  ) {
    const type = policyType(req.policyType);
    if (await this.mapped(type, req.policyId)) mappedHasNoHistory(type, req.policyId);
    // A deleted policy is not restored (its versions' snapshot makes a new one).
    const { workspaceId } = await this.find(type, req.policyId);
    const row = await this.version(type, req.policyId, req.version);
    const answer = await this.edit(workspaceId, async (read) => {
      const { doc } = await this.managing(read, workspaceId, type);
      const stored = doc.policies.find((p) => p.id === req.policyId && p.policyType === type);
      if (!stored) policyNotFound(type, req.policyId);
      const after = restoredPolicy(stored, row, this.clock.now());
      const failing = await checkedChange(after, req.force, this.options.checks);
      const next = placed(doc, after);
      return { doc: next, result: { doc: next, before: stored, after, failing } };
    });
    await this.recordVersion(
      ctx,
      {
        action: "guardrail_policy.restore",
        resource: { type: "guardrail_policy", id: req.policyId, label: answer.after.name },
        workspaceId,
        changes: noted(
          changesBetween(auditFields(answer.before), auditFields(answer.after)),
          answer.failing,
          req.version,
        ),
      },
      answer.after,
    );
    return { policy: this.toProto(answer.doc, answer.after) };
  }

  /**
   * Runs the checks against the policy as it is and keeps the run on it (audited; no version:
   * the policy's rule did not change). Stored only over the policy it ran against.
   */
  async runGuardrailPolicyChecks(req: RunGuardrailPolicyChecksRequest, ctx: HandlerContext) {
    const type = policyType(req.policyType);
    if (await this.mapped(type, req.policyId)) mappedHasNoHistory(type, req.policyId);
    refuseBudgetChecks(type);
    const { workspaceId } = await this.find(type, req.policyId);
    const answer = await this.edit(workspaceId, async (doc) => {
      const stored = doc.policies.find((p) => p.id === req.policyId && p.policyType === type);
      if (!stored) policyNotFound(type, req.policyId);
      const run = await runPolicyChecks(stored, this.options.checks);
      const after = { ...stored, lastCheckRun: toJson(GuardrailCheckRunSchema, run) };
      return { doc: placed(doc, after), result: { run, before: stored } };
    });
    const before = lastRunOf(answer.before);
    await this.recordWith(ctx, {
      action: "guardrail_policy.checks_run",
      resource: { type: "guardrail_policy", id: req.policyId, label: answer.before.name },
      workspaceId,
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

function msOf(t: Timestamp | undefined): number | undefined {
  return t && timestampMs(t);
}

/** The request log's database away is a 503 worth retrying; anything else stays internal. */
function unavailableAsRetry(err: unknown): never {
  if (!isDatabaseUnavailable(err)) throw err;
  return storeUnavailable("the request log's database is not answering; retry shortly");
}

function storeUnavailable(why: string): never {
  throw withReason(
    Code.Unavailable,
    ErrorReason.STORE_UNAVAILABLE,
    `What-if replays are not available: ${why}`,
  );
}

/**
 * The document with `policy` in place (added or replaced). A workspace has one default per
 * type: making this one the default unsets the previous one.
 */
function placed(doc: PolicyDoc, policy: StoredPolicy): PolicyDoc {
  const others = doc.policies
    .filter((p) => p.id !== policy.id)
    .map((p) =>
      policy.isWorkspaceDefault && p.isWorkspaceDefault && p.policyType === policy.policyType
        ? { ...p, isWorkspaceDefault: false }
        : p,
    );
  const at = doc.policies.findIndex((p) => p.id === policy.id);
  if (at < 0) return { ...doc, policies: [...others, policy] };
  const policies = [...others];
  policies.splice(at, 0, policy);
  return { ...doc, policies };
}
