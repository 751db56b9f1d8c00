import {
  create,
  type DescMessage,
  fromJson,
  type JsonValue,
  type MessageShape,
  toJson,
} from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { GuardrailShadowSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GetGuardrailPolicyShadowResponse,
  GetGuardrailPolicyShadowResponseSchema,
  type GuardrailPolicyInput,
  GuardrailPolicyInputSchema,
  type GuardrailPolicyShadow,
  GuardrailPolicyShadowSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { policyAsGuardrail } from "../../governance/policy/policy-guardrails.js";
import { quote } from "../../platform/quote.js";
import { conflict, notFound } from "../../platform/rpc/errors.js";
import type { StoredPolicy, StoredPolicyShadow } from "../../store/policies/types.js";
import type { GuardrailWhatIf } from "./what-if.js";

/** The change as stored in the policy document: protobuf JSON with the proto's field names. */
const JSON_NAMES = { useProtoFieldName: true } as const;

export function noPolicyShadow(type: string, id: string): never {
  throw notFound(
    ErrorReason.SHADOW_NOT_FOUND,
    `${type} policy ${quote(id.slice(0, 80))} runs no shadow`,
  );
}

/** A policy runs at most one shadow until it is promoted, ended or expires. */
export function checkNoRunningShadow(
  kind: string,
  p: Pick<StoredPolicy, "id" | "shadow">,
  nowMs: number,
): void {
  if (p.shadow && p.shadow.expiresAtMs > nowMs)
    throw conflict(
      ErrorReason.SHADOW_EXISTS,
      `${kind} policy ${quote(p.id)} already runs a shadow until ${new Date(p.shadow.expiresAtMs).toISOString()}: promote or end it first`,
    );
}

/**
 * A shadow as a policy document keeps it: the change (a workspace policy's GuardrailPolicyInput,
 * or a workspace-wide one's AccountPolicyInput) and the settings it leaves.
 */
export function storedShadow<Desc extends DescMessage>(
  schema: Desc,
  change: MessageShape<Desc>,
  proposed: { name: string; config: Record<string, unknown> },
  startedAtMs: number,
  expiresAtMs: number,
): StoredPolicyShadow {
  return {
    change: toJson(schema, change, JSON_NAMES),
    name: proposed.name,
    config: proposed.config,
    startedAtMs,
    expiresAtMs,
  };
}

/** The stored change as UpdateGuardrailPolicy takes it (a promote replays it as one). */
export function shadowChange(s: StoredPolicyShadow): GuardrailPolicyInput {
  return fromJson(GuardrailPolicyInputSchema, s.change as JsonValue);
}

export function shadowToProto(s: StoredPolicyShadow): GuardrailPolicyShadow {
  return create(GuardrailPolicyShadowSchema, {
    change: shadowChange(s),
    startedAt: timestampFromMs(s.startedAtMs),
    expiresAt: timestampFromMs(s.expiresAtMs),
  });
}

/** A shadow as its audit event shows it: the change and how long it runs. */
export function shadowSummary(s: StoredPolicyShadow | undefined): JsonValue {
  if (!s) return null;
  return { change: s.change as JsonValue, expires_at: new Date(s.expiresAtMs).toISOString() };
}

/**
 * The shadow with what it would have changed since it started, reported as a guardrail's is:
 * the records carrying its shadow outcome (recorded under the policy's id), and its budget
 * replayed from the records.
 */
export async function policyShadowReport(
  whatIf: GuardrailWhatIf,
  p: StoredPolicy & { shadow: StoredPolicyShadow },
  nowMs: number,
): Promise<GetGuardrailPolicyShadowResponse> {
  const report = await whatIf.report(
    policyAsGuardrail(p),
    policyAsGuardrail({ ...p, name: p.shadow.name, config: p.shadow.config }),
    create(GuardrailShadowSchema, {
      startedAt: timestampFromMs(p.shadow.startedAtMs),
      expiresAt: timestampFromMs(p.shadow.expiresAtMs),
    }),
    nowMs,
  );
  return create(GetGuardrailPolicyShadowResponseSchema, {
    shadow: shadowToProto(p.shadow),
    expired: report.expired,
    outcomesChanged: report.outcomesChanged,
    changes: report.changes,
    affectedGenerationIds: report.affectedGenerationIds,
    budget: report.budget,
  });
}

/**
 * The policy, a workspace's or a workspace-wide one, without its running shadow (what a version
 * of it keeps).
 */
export function withoutShadow<P extends { shadow?: StoredPolicyShadow }>(p: P): Omit<P, "shadow"> {
  if (!p.shadow) return p;
  const { shadow: _running, ...rest } = p;
  return rest;
}
