import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../platform/rpc/errors.js";

/**
 * A store write refused because a count limit (COUNT_LIMITS, domain/limits.ts) is reached: `count` is what
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
