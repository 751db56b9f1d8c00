import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type AccountPolicy,
  type GuardrailPolicy,
  type GuardrailPolicyVersion,
  GuardrailPolicyVersionSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { quote } from "../../platform/quote.js";
import { failedPrecondition, notFound } from "../../platform/rpc/errors.js";
import type { PolicyType, StoredPolicy } from "../../store/policies/types.js";
import type { AuditEntry } from "../../store/request-log/audit-log.js";
import { CHANGE_NOTES } from "../../store/request-log/guardrail-versions.js";
import type { PolicyVersionRow } from "../../store/request-log/policy-versions.js";

/** The audit notes of a change forced past failing checks, or restoring a version. */
export function noted(
  changes: AuditEntry["changes"],
  failing: string[],
  restoredFrom?: number,
): AuditEntry["changes"] {
  const out = { ...changes };
  if (restoredFrom !== undefined)
    out[CHANGE_NOTES.restoredFrom] = { before: null, after: restoredFrom };
  if (failing.length > 0) {
    out[CHANGE_NOTES.forced] = { before: null, after: true };
    out[CHANGE_NOTES.failingChecks] = { before: null, after: failing };
  }
  return out;
}

/** A stored version as the API answers it; the policy it left only when asked for one. */
export function versionMessage(
  row: PolicyVersionRow,
  policy?: (p: StoredPolicy) => GuardrailPolicy,
): GuardrailPolicyVersion {
  return create(GuardrailPolicyVersionSchema, {
    policyId: row.policyId,
    policyType: row.policyType,
    version: row.version,
    createdAt: timestampFromDate(row.at),
    actor: row.actor,
    action: row.action,
    changes: row.changes as JsonObject,
    forced: row.forced,
    restoredFrom: row.restoredFrom ?? undefined,
    policy: policy && row.data ? policy(row.data as unknown as StoredPolicy) : undefined,
    deletedAt: row.deletedAt ? timestampFromDate(row.deletedAt) : undefined,
  });
}

/** What a restore sets back, and counts: a workspace policy's or a workspace-wide one's. */
type Restorable = Pick<StoredPolicy, "name" | "config" | "checks" | "revision" | "updatedAtMs">;

/**
 * A workspace-wide policy's version: the rows are kept under ACCOUNT_POLICY_VERSIONS, and the
 * type is the policy's; the policy it left only when asked for one.
 */
export function accountVersionMessage(
  row: PolicyVersionRow,
  type: string,
  policy?: AccountPolicy,
): GuardrailPolicyVersion {
  const v = versionMessage(row);
  v.policyType = type;
  v.accountPolicy = policy;
  return v;
}

/**
 * The policy a restore of `version` leaves: its rule (name, config, checks) as the version had
 * it. Who it governs (the assignment lists, the workspace default) stays as it is now: those
 * change through assignments as well, which are no versions, and setting them back could give
 * a key two policies of a type or take a subject off a policy someone assigned since. A
 * workspace-wide policy keeps the workspaces it covers for the same reason.
 */
export function restoredPolicy<P extends Restorable>(
  current: P,
  version: PolicyVersionRow,
  nowMs: number,
): P {
  const then = version.data as unknown as Restorable;
  const next: P = {
    ...current,
    name: then.name,
    config: then.config,
    revision: (current.revision ?? 0) + 1,
    updatedAtMs: nowMs,
  };
  if (then.checks === undefined) delete next.checks;
  else next.checks = then.checks;
  return next;
}

/** 404 for a version the policy does not have, naming the ones it has. */
export function versionNotFound(
  type: PolicyType | "account",
  id: string,
  n: number,
  range: { first: number; last: number } | undefined,
): never {
  const has = range ? ` (its versions are ${range.first} to ${range.last})` : "";
  throw notFound(
    ErrorReason.GUARDRAIL_VERSION_NOT_FOUND,
    `${type} policy ${quote(id.slice(0, 80))} has no version ${n}${has}`,
  );
}

/**
 * A mapped policy is the read-only view of a guardrail: its history and checks are the
 * guardrail's, and a restore through the policies API would move the type off the guardrails.
 */
export function mappedHasNoHistory(type: PolicyType, id: string): never {
  throw failedPrecondition(
    `${type} policy ${quote(id)} is mapped from guardrail ${id} (is_legacy_mapped): its versions and checks are the guardrail's, at /api/v1/guardrails/${id}/versions and /api/v1/guardrails/${id}/checks/run`,
  );
}
