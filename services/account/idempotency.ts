import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../platform/auth/caller-auth.js";
import { invalidArgument } from "../../platform/errors.js";
import {
  IDEMPOTENCY_KEY_HEADER,
  idempotencyId,
  idempotencyKeyProblem,
} from "../../platform/idempotency.js";

/**
 * The call's Idempotency-Key (the gateway passes its client's on; a gRPC caller may send its own)
 * as an id of the caller and the key, or undefined when the call has none.
 */
export function idempotencyIdOf(ctx: HandlerContext): string | undefined {
  const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER);
  if (key === null) return undefined;
  const problem = idempotencyKeyProblem(key);
  if (problem) throw invalidArgument(problem);
  return idempotencyId(callerOf(ctx).principal.key.hash, key);
}
