import { Code } from "@connectrpc/connect";
import { withHttpStatus } from "../platform/errors.js";

/**
 * A store write refused because a count limit (COUNT_LIMITS, platform/limits.ts) is reached: `count` is what
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
 * A count limit answers 409 (the request conflicts with the current state:
 * delete something first), never 429, which would invite a blind retry.
 */
export function limitError(message: string): ReturnType<typeof withHttpStatus> {
  return withHttpStatus(Code.ResourceExhausted, 409, message);
}
