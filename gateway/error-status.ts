import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { errorInfoOf } from "../platform/rpc/errors.js";

/**
 * The HTTP status of every reason a service may give (ErrorInfo detail): the
 * one table that turns what happened into the spec's status. Typed over the
 * whole enum, so a reason added to the proto without a status here does not
 * compile. UNSPECIFIED is no reason at all: the gRPC code decides.
 */
export const STATUS_BY_REASON: Readonly<
  Record<Exclude<ErrorReason, ErrorReason.UNSPECIFIED>, number>
> = {
  [ErrorReason.INSUFFICIENT_CREDITS]: 402,
  [ErrorReason.PAYLOAD_TOO_LARGE]: 413,
  [ErrorReason.RATE_LIMITED]: 429,
  // OpenRouter answers a key over its own limit with 403 "Key limit exceeded".
  [ErrorReason.KEY_LIMIT_EXCEEDED]: 403,
  [ErrorReason.BUDGET_EXCEEDED]: 403,
  // 409, never 429: a count limit holds until something is deleted, a blind retry cannot help.
  [ErrorReason.COUNT_LIMIT_REACHED]: 409,
  [ErrorReason.WORKSPACE_HAS_ENABLED_KEYS]: 409,
  [ErrorReason.MEMBER_HAS_ENABLED_KEYS]: 409,
  [ErrorReason.STORE_UNAVAILABLE]: 503,
  [ErrorReason.UPSTREAM_ERROR]: 502,
  [ErrorReason.UPSTREAM_UNREACHABLE]: 502,
  [ErrorReason.UPSTREAM_UNAVAILABLE]: 503,
  // Cloudflare's "a timeout occurred", as OpenRouter uses it.
  [ErrorReason.UPSTREAM_TIMEOUT]: 524,
  [ErrorReason.UPSTREAM_OVERLOADED]: 529,
  // The rest name refusals whose gRPC code already gives the spec's status; the
  // table says it again so that a service changing its code cannot move the status.
  [ErrorReason.API_KEY_MISSING]: 401,
  [ErrorReason.API_KEY_MALFORMED]: 401,
  [ErrorReason.API_KEY_INVALID]: 401,
  [ErrorReason.API_KEY_DISABLED]: 401,
  [ErrorReason.API_KEY_EXPIRED]: 401,
  [ErrorReason.MANAGEMENT_KEY_REQUIRED]: 403,
  [ErrorReason.STANDARD_KEY_REQUIRED]: 403,
  [ErrorReason.GATEWAY_TOKEN_INVALID]: 401,
  [ErrorReason.GATEWAY_CREDENTIAL_REQUIRED]: 403,
  [ErrorReason.REGION_NOT_ALLOWED]: 403,
  [ErrorReason.MODEL_NOT_ALLOWED]: 403,
  [ErrorReason.MODEL_IGNORED]: 403,
  [ErrorReason.CONTENT_BLOCKED]: 403,
  [ErrorReason.PROMPT_INJECTION_BLOCKED]: 403,
  // The spec's two 404s of speech routing (OpenRouter's "No endpoints available ...").
  [ErrorReason.NO_ALLOWED_ENDPOINT]: 404,
  [ErrorReason.NO_CAPABLE_ENDPOINT]: 404,
  [ErrorReason.WORKSPACE_NOT_FOUND]: 404,
  [ErrorReason.KEY_NOT_FOUND]: 404,
  [ErrorReason.GUARDRAIL_NOT_FOUND]: 404,
  [ErrorReason.MODEL_NOT_FOUND]: 404,
  [ErrorReason.GENERATION_NOT_FOUND]: 404,
  [ErrorReason.WEBHOOK_NOT_FOUND]: 404,
  [ErrorReason.POLICY_NOT_FOUND]: 404,
  [ErrorReason.GUARDRAIL_VERSION_NOT_FOUND]: 404,
  [ErrorReason.SHADOW_EXISTS]: 409,
  [ErrorReason.SHADOW_NOT_FOUND]: 404,
  // The spec's "409 (conflict; retry later)" of a guardrail update.
  [ErrorReason.UPDATE_CONFLICT]: 409,
  [ErrorReason.ID_COLLISION]: 409,
  [ErrorReason.SLUG_TAKEN]: 409,
  [ErrorReason.CHECKS_FAILED]: 409,
};

/**
 * The status of an error that gives no reason, by its gRPC code. Exhaustive
 * too, so every code has a considered answer rather than a silent 500.
 */
export const STATUS_BY_CODE: Readonly<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 524,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

export interface ErrorStatus {
  status: number;
  /** Seconds for the Retry-After header, when the service said how long to wait. */
  retryAfterSeconds?: number;
}

/** The one place that maps an error from a service to the HTTP status clients see. */
export function errorStatusOf(err: ConnectError): ErrorStatus {
  const info = errorInfoOf(err);
  const reason = info?.reason ?? ErrorReason.UNSPECIFIED;
  // A reason this build does not know (a newer service) falls back to the code, like no reason.
  const byReason =
    reason === ErrorReason.UNSPECIFIED
      ? undefined
      : (STATUS_BY_REASON as Partial<Record<ErrorReason, number>>)[reason];
  const status = byReason ?? STATUS_BY_CODE[err.code] ?? 500;
  return info?.retryAfterSeconds === undefined
    ? { status }
    : { status, retryAfterSeconds: info.retryAfterSeconds };
}
