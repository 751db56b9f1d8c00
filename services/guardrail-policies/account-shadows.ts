import { create } from "@bufbuild/protobuf";
import { type Timestamp, timestampMs } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { shadowExpiry } from "../../domain/shadow-expiry.js";
import {
  AccountPolicyInputSchema,
  type EndAccountPolicyShadowRequest,
  type GetAccountPolicyShadowRequest,
  type GetAccountPolicyShadowResponse,
  type PromoteAccountPolicyShadowRequest,
  type StartAccountPolicyShadowRequest,
  UpdateAccountPolicyRequestSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { ACCOUNT_DOC, type PolicyDocStore } from "../../store/policies/types.js";
import type { AccountPolicies, RecordWith, VersionedAccountPolicy } from "./account-policies.js";
import {
  accountShadowChange,
  accountShadowReport,
  accountShadowToProto,
  type ShadowedAccountPolicy,
} from "./account-shadow.js";
import { fail, policyNotFound } from "./rules.js";
import { checkNoRunningShadow, noPolicyShadow, shadowSummary, storedShadow } from "./shadow.js";
import type { GuardrailWhatIf } from "./what-if.js";

/** What a shadow of a workspace-wide policy reads and tells beside the policy itself. */
export interface AccountShadowOptions {
  /** The guardrail shadow report each covered workspace's part is computed by. */
  whatIf?: GuardrailWhatIf;
  /** A report found its shadow expired (its webhook events are due, unless already queued). */
  shadowExpired?: (policy: ShadowedAccountPolicy, report: GetAccountPolicyShadowResponse) => void;
  /** The request log's database away, as the service answers it (503, worth a retry). */
  unavailableAsRetry: (err: unknown) => never;
}

function msOf(t: Timestamp | undefined): number | undefined {
  return t && timestampMs(t);
}

/**
 * Shadows of workspace-wide policies: stored on the policy in the account document, so a start,
 * end or promote is announced to every speech process at once, and decided there on each request
 * of a covered workspace (the policy's governing layer carries it, as a workspace policy's does).
 */
export class AccountPolicyShadows {
  constructor(
    private readonly docs: PolicyDocStore,
    private readonly policies: AccountPolicies,
    private readonly recordWith: RecordWith,
    private readonly options: AccountShadowOptions,
  ) {}

  /**
   * Starts deciding a proposed replace beside the live policy: the change is checked as a
   * replace is, and the settings it leaves are kept with the shadow.
   */
  async start(req: StartAccountPolicyShadowRequest, ctx: HandlerContext) {
    const input = req.change ?? fail("change is required (the body a PUT takes)");
    const { live, name, config } = await this.policies.checkedChange(req.id, input);
    // Requests compare a shadow's expiry with the wall clock, so it is set by the same.
    const nowMs = Date.now();
    shadowExpiry(msOf(req.expiresAt), nowMs);
    const expiresAtMs = msOf(req.expiresAt) ?? nowMs;
    const started = await this.policies.editPolicy(req.id, async (stored) => {
      checkNoRunningShadow("account", stored, nowMs);
      const shadow = storedShadow(
        AccountPolicyInputSchema,
        input,
        { name, config },
        nowMs,
        expiresAtMs,
      );
      return {
        next: { ...stored, shadow },
        result: { before: stored.shadow, shadow, label: stored.name },
      };
    });
    // Written before the answer, as a change's event is.
    await this.recordWith(ctx, {
      action: "guardrail_policy.shadow_start",
      resource: { type: "guardrail_policy", id: req.id, label: started.label },
      changes: {
        shadow: { before: shadowSummary(started.before), after: shadowSummary(started.shadow) },
      },
    });
    return {
      shadow: accountShadowToProto(started.shadow),
      workspaceIds: await this.policies.covered(live),
    };
  }

  /** The shadow and what it would have changed since it started (an expired one says so). */
  async get(req: GetAccountPolicyShadowRequest) {
    const { answer, policy } = await this.reportOf(req.id);
    // Whoever notices an expiry first announces it: this read, or the control plane's sweep.
    if (answer.expired) this.options.shadowExpired?.(policy, answer);
    return answer;
  }

  /** A shadow's report over the workspaces the policy covers now, and the policy as read. */
  async reportOf(id: string) {
    const live = (await this.policies.stored(id)) ?? policyNotFound("account", id);
    const shadow = live.shadow ?? noPolicyShadow("account", id);
    const policy: ShadowedAccountPolicy = { ...live, shadow };
    const covered = await this.policies.covered(live);
    const answer = await accountShadowReport(
      this.options.whatIf,
      policy,
      covered,
      Date.now(),
    ).catch(this.options.unavailableAsRetry);
    return { answer, policy };
  }

  /** The workspaces a policy covers now (whose records its report counts). */
  covered(p: VersionedAccountPolicy): Promise<string[]> {
    return this.policies.covered(p);
  }

  /** The policies that run (or ran until they expired) a shadow: the expiry sweep's read. */
  async shadowed(): Promise<ShadowedAccountPolicy[]> {
    const { doc } = await this.docs.read(ACCOUNT_DOC);
    return (doc.accountPolicies ?? []).flatMap((p) =>
      p.shadow ? [{ ...p, shadow: p.shadow }] : [],
    );
  }

  /** Applies the shadow's change as a replace and ends the shadow in the same write. */
  async promote(req: PromoteAccountPolicyShadowRequest, ctx: HandlerContext) {
    const live = (await this.policies.stored(req.id)) ?? policyNotFound("account", req.id);
    const shadow = live.shadow ?? noPolicyShadow("account", req.id);
    const update = create(UpdateAccountPolicyRequestSchema, {
      id: req.id,
      policy: { ...accountShadowChange(shadow), policyType: live.policyType },
      force: req.force,
    });
    return this.policies.update(update, ctx, shadow);
  }

  async end(req: EndAccountPolicyShadowRequest, ctx: HandlerContext) {
    const ended = await this.policies.editPolicy(req.id, async (stored) => {
      const shadow = stored.shadow ?? noPolicyShadow("account", req.id);
      const { shadow: _ended, ...rest } = stored;
      return { next: rest, result: { shadow, label: stored.name } };
    });
    // Written before the answer, as a change's event is.
    await this.recordWith(ctx, {
      action: "guardrail_policy.shadow_end",
      resource: { type: "guardrail_policy", id: req.id, label: ended.label },
      changes: { shadow: { before: shadowSummary(ended.shadow), after: null } },
    });
    return { ended: true };
  }
}
