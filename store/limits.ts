import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../platform/errors.js";

/**
 * How many of each thing the store keeps at most (README "Limits"). Every
 * bound is checked inside the write that would exceed it (a Lua script on
 * Redis, a synchronous method in the embedded store), so concurrent creates
 * can never overshoot. Why these numbers:
 * - A guardrail's fields are bounded (lists of 1000 items, 100 filters), so
 *   at most ~1 MiB each in the worst case; 1,000 per workspace keeps a
 *   workspace's guardrails below ~1 GiB even then, and far more than any
 *   policy set we have seen needs (typically a handful per team).
 * - Keys are small (~300 bytes): 10,000 per workspace is ~3 MiB and covers a
 *   key per service, per developer and per CI job of a large organization.
 * - Management keys are for operators and automation: 1,000 is generous.
 * - A key holds at most one assignment, so key assignments can never exceed
 *   the keys; member ids are free-form, so member assignments need a bound
 *   of their own: the same 10,000.
 * - 1,000 workspaces per deployment: listing keys or guardrails across all
 *   workspaces walks the workspace index, which stays cheap at that size.
 */
export interface CountLimits {
  workspaces: number;
  guardrailsPerWorkspace: number;
  keysPerWorkspace: number;
  managementKeys: number;
  keyAssignmentsPerWorkspace: number;
  memberAssignmentsPerWorkspace: number;
}

export const COUNT_LIMITS: Readonly<CountLimits> = Object.freeze({
  workspaces: 1_000,
  guardrailsPerWorkspace: 1_000,
  keysPerWorkspace: 10_000,
  managementKeys: 1_000,
  keyAssignmentsPerWorkspace: 10_000,
  memberAssignmentsPerWorkspace: 10_000,
});

/**
 * A store write refused because a count limit is reached: `count` is what
 * exists now, `adding` how many the refused write would have added.
 */
export interface LimitReached {
  limit: number;
  count: number;
  adding: number;
}

export function isLimitReached(v: unknown): v is LimitReached {
  return typeof v === "object" && v !== null && "limit" in v && "count" in v;
}

/**
 * A count limit is its own reason, which the gateway answers with 409 (the
 * request conflicts with the current state: delete something first), never
 * 429, which would invite a blind retry.
 */
export function limitError(message: string): ConnectError {
  return withReason(Code.ResourceExhausted, ErrorReason.COUNT_LIMIT_REACHED, message);
}
