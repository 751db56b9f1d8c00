import type { HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../domain/auth/caller-auth.js";
import {
  IDEMPOTENCY_CLAIM_SECONDS,
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_TTL_SECONDS,
  idempotencyId,
  idempotencyKeyProblem,
} from "../../domain/idempotency.js";
import { IdempotencyKeyState } from "../../gen/railgate/account/v1/account_service_pb.js";
import { invalidArgument } from "../../platform/rpc/errors.js";
import type { Store } from "../../store/types.js";

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

function requiredIdOf(ctx: HandlerContext): string {
  const id = idempotencyIdOf(ctx);
  if (id === undefined) throw invalidArgument(`${IDEMPOTENCY_KEY_HEADER} metadata is required`);
  return id;
}

/**
 * The Idempotency-Key RPCs: the claims and answers live in the store the services hold, so a
 * gateway needs no store of its own, and every replica of it sees every key.
 */
export async function claimIdempotencyKey(
  store: Store,
  req: { fingerprint: string },
  ctx: HandlerContext,
) {
  const claim = await store.claimIdempotency(
    requiredIdOf(ctx),
    req.fingerprint,
    IDEMPOTENCY_CLAIM_SECONDS,
  );
  switch (claim.state) {
    case "claimed":
      return { state: IdempotencyKeyState.CLAIMED, token: claim.token };
    case "in-progress":
      return { state: IdempotencyKeyState.IN_PROGRESS, fingerprint: claim.fingerprint };
    default:
      return {
        state: IdempotencyKeyState.DONE,
        fingerprint: claim.fingerprint,
        status: claim.answer.status,
        body: claim.answer.body,
      };
  }
}

export async function completeIdempotencyKey(
  store: Store,
  req: { token: string; status: number; body: string },
  ctx: HandlerContext,
) {
  const answer = { status: req.status, body: req.body };
  const stored = await store.completeIdempotency(
    requiredIdOf(ctx),
    req.token,
    answer,
    IDEMPOTENCY_TTL_SECONDS,
  );
  return { stored };
}

export async function releaseIdempotencyKey(
  store: Store,
  req: { token: string },
  ctx: HandlerContext,
) {
  await store.releaseIdempotency(requiredIdOf(ctx), req.token);
  return {};
}
