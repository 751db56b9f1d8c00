import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../../../../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../../../../platform/errors.js";

/**
 * Upstream failures by reason, which the gateway answers in the spec's terms:
 * overload 529, unavailable 503, other provider errors 502, time-outs 524.
 * The provider's own message is kept short and never includes our request.
 */
export function upstreamHttpError(provider: string, status: number, detail: string): ConnectError {
  const why = detail ? `: ${detail.slice(0, 300)}` : "";
  if (status === 429 || status === 529) {
    return withReason(
      Code.ResourceExhausted,
      ErrorReason.UPSTREAM_OVERLOADED,
      `Provider ${provider} is overloaded (HTTP ${status})${why}`,
    );
  }
  if (status === 503) {
    return withReason(
      Code.Unavailable,
      ErrorReason.UPSTREAM_UNAVAILABLE,
      `Provider ${provider} is temporarily unavailable${why}`,
    );
  }
  return withReason(
    Code.Unavailable,
    ErrorReason.UPSTREAM_ERROR,
    `Provider ${provider} returned an error (HTTP ${status})${why}`,
  );
}

export function upstreamTimeout(provider: string, ms: number): ConnectError {
  return withReason(
    Code.DeadlineExceeded,
    ErrorReason.UPSTREAM_TIMEOUT,
    `Provider ${provider} timed out after ${ms} ms`,
  );
}

export function upstreamUnreachable(provider: string, cause: string): ConnectError {
  return withReason(
    Code.Unavailable,
    ErrorReason.UPSTREAM_UNREACHABLE,
    `Provider ${provider} could not be reached: ${cause}`,
  );
}
