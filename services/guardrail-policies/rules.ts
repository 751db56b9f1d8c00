import { COUNT_LIMITS, GUARDRAIL_LIMITS as LIMITS } from "../../domain/limits.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import type { SubjectList } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { quote } from "../../platform/quote.js";
import { conflict, invalidArgument, notFound } from "../../platform/rpc/errors.js";
import {
  isPolicyType,
  managesType,
  type PolicyDoc,
  type PolicyDocStore,
  type PolicyType,
} from "../../store/policies/types.js";

/** A write is computed from what was read and applied only if nothing changed meanwhile; past this many races, 409. */
export const WRITE_ATTEMPTS = 8;
export const POLICIES_PER_WORKSPACE = COUNT_LIMITS.guardrailsPerWorkspace;

export function fail(message: string): never {
  throw invalidArgument(message);
}

export function policyType(value: string, field = "policy_type"): PolicyType {
  if (!isPolicyType(value))
    fail(`${field} must be one of "budget", "model_availability", "moderation"`);
  return value;
}

export function policyNotFound(type: string, id: string): never {
  throw notFound(
    ErrorReason.POLICY_NOT_FOUND,
    `${type} policy ${quote(id.slice(0, 80))} not found`,
  );
}

export function subjects(field: string, list: SubjectList | undefined, max: number): string[] {
  const ids = list?.ids ?? [];
  if (ids.length > LIMITS.subjectsMax)
    fail(`${field} may have at most ${LIMITS.subjectsMax} elements`);
  ids.forEach((s, i) => {
    if (s.trim().length === 0 || s.length > max)
      fail(`${field}[${i}] must be a non-empty string of at most ${max} characters`);
  });
  return [...new Set(ids)];
}

export function policyName(name: string): string {
  if (name.trim().length === 0 || [...name].length > LIMITS.nameMax)
    fail(`name is required: 1 to ${LIMITS.nameMax} characters, not blank`);
  return name;
}

/**
 * Reads a policy document, lets `change` compute the next one (or refuse), and writes it if no
 * other write came first; otherwise decides again on a fresh read. A change that moves a type
 * to policies (takeover.ts) made them from the guardrails it read after this read: it is
 * written only if no guardrail write came in between either, so none is left out of them.
 */
export async function editDoc<T>(
  docs: PolicyDocStore,
  key: string,
  change: (doc: PolicyDoc) => Promise<{ doc: PolicyDoc | null; result: T }>,
): Promise<T> {
  for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
    const { doc, version, guardrailWrites } = await docs.read(key);
    const next = await change(doc);
    if (next.doc === null) return next.result;
    const moved = (next.doc.managedTypes ?? []).some((t) => !managesType(doc, t));
    if (await docs.write(key, version, next.doc, moved ? guardrailWrites : undefined))
      return next.result;
  }
  throw conflict(ErrorReason.UPDATE_CONFLICT, `policies of ${key} kept changing: retry`);
}
