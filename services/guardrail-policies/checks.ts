import { create, fromJson, type JsonValue, toJson } from "@bufbuild/protobuf";
import { CHECK_OUTCOMES, regionName } from "../../domain/enums.js";
import {
  type GuardrailCheckList,
  GuardrailCheckListSchema,
  type GuardrailCheckRun,
  GuardrailCheckRunSchema,
  Region,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { validateChecks } from "../../governance/checks/check-validation.js";
import {
  type CheckContext,
  checksFailedError,
  failingChecks,
  runChecks,
} from "../../governance/checks/run-checks.js";
import { policyAsGuardrail } from "../../governance/policy/policy-guardrails.js";
import { failedPrecondition } from "../../platform/rpc/errors.js";
import type { PolicyType, StoredPolicy } from "../../store/policies/types.js";
import { fail } from "./rules.js";

/**
 * Why a budget policy takes no checks: a check decides an example request, which has no spend
 * of its own, so nothing a budget policy sets could change its outcome.
 */
export const NO_BUDGET_CHECKS =
  "checks are not available on budget policies: an example request has no spend, so a budget cannot change its outcome";

/** What checks read and keep of a policy: a workspace policy's or a workspace-wide one's. */
export type CheckedPolicy = Pick<
  StoredPolicy,
  "id" | "name" | "policyType" | "config" | "checks" | "lastCheckRun"
> & { workspaceId?: string };

/**
 * The checks an input sets, validated as a guardrail's are (the same messages), as stored:
 * undefined when the input leaves them out, null when it removes them.
 */
export function inputChecks(
  type: PolicyType,
  list: GuardrailCheckList | undefined,
): JsonValue | null | undefined {
  if (list === undefined) return undefined;
  if (list.values.length === 0) return null;
  if (type === "budget") fail(NO_BUDGET_CHECKS);
  validateChecks(list);
  return toJson(GuardrailCheckListSchema, list);
}

export function checksOf(p: CheckedPolicy): GuardrailCheckList | undefined {
  return p.checks === undefined ? undefined : fromJson(GuardrailCheckListSchema, p.checks);
}

export function lastRunOf(p: CheckedPolicy): GuardrailCheckRun | undefined {
  return p.lastCheckRun === undefined
    ? undefined
    : fromJson(GuardrailCheckRunSchema, p.lastCheckRun);
}

/**
 * Decides each check's example request under the policy alone: a policy of one type is the
 * guardrail that holds exactly its settings (governance/policy/policy-guardrails.ts), so the
 * decision is the one a guardrail's check gets (governance/decide-example.ts).
 */
export async function runPolicyChecks(
  p: CheckedPolicy,
  ctx: CheckContext,
): Promise<GuardrailCheckRun> {
  const guardrail = policyAsGuardrail(p);
  guardrail.checks = checksOf(p) ?? create(GuardrailCheckListSchema);
  return runChecks(guardrail, ctx);
}

/**
 * Runs the checks of the policy a change would leave and keeps the run on it (none: no run).
 * A failing check refuses the change (409 naming each) unless it is forced; forced, the
 * failing checks are returned for the audit event.
 */
export async function checkedChange(
  next: CheckedPolicy,
  force: boolean,
  ctx: CheckContext,
): Promise<string[]> {
  next.lastCheckRun = undefined;
  if (next.checks === undefined) return [];
  const run = await runPolicyChecks(next, ctx);
  const failing = failingChecks(run);
  if (failing.length > 0 && !force) throw checksFailedError(failing);
  run.forced = failing.length > 0;
  next.lastCheckRun = toJson(GuardrailCheckRunSchema, run);
  return failing;
}

/** A policy's checks in the API's names and values, as the audit log and versions show them. */
export function checksForAudit(p: CheckedPolicy): unknown {
  const list = checksOf(p);
  if (!list) return null;
  return list.values.map((c) => {
    const r = c.request;
    const request: Record<string, unknown> = { model: r?.model ?? "" };
    if (r?.input !== undefined) request.input = r.input;
    if (r?.voice !== undefined) request.voice = r.voice;
    if (r && r.region !== Region.UNSPECIFIED) request.region = regionName(r.region) ?? null;
    if (r?.provider !== undefined) request.provider = r.provider;
    return {
      name: c.name,
      request,
      expect: CHECK_OUTCOMES.name(c.expect) ?? null,
      ...(c.reason !== undefined ? { reason: c.reason } : {}),
    };
  });
}

/** A budget policy has no checks to run. */
export function refuseBudgetChecks(type: PolicyType): void {
  if (type === "budget") throw failedPrecondition(NO_BUDGET_CHECKS);
}
