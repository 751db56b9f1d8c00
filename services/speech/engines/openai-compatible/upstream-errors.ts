import { Code, type ConnectError } from "@connectrpc/connect";
import { withHttpStatus } from "../../../../platform/errors.js";

/**
 * Upstream failures in the spec's terms: overload 529, unavailable 503, other
 * provider errors 502, time-outs 524. The provider's own message is kept
 * short and never includes our request.
 */
export function upstreamHttpError(provider: string, status: number, detail: string): ConnectError {
  const why = detail ? `: ${detail.slice(0, 300)}` : "";
  if (status === 429 || status === 529) {
    return withHttpStatus(
      Code.ResourceExhausted,
      529,
      `Provider ${provider} is overloaded (HTTP ${status})${why}`,
    );
  }
  if (status === 503) {
    return withHttpStatus(
      Code.Unavailable,
      503,
      `Provider ${provider} is temporarily unavailable${why}`,
    );
  }
  return withHttpStatus(
    Code.Unavailable,
    502,
    `Provider ${provider} returned an error (HTTP ${status})${why}`,
  );
}

export function upstreamTimeout(provider: string, ms: number): ConnectError {
  return withHttpStatus(
    Code.DeadlineExceeded,
    524,
    `Provider ${provider} timed out after ${ms} ms`,
  );
}

export function upstreamUnreachable(provider: string, cause: string): ConnectError {
  return withHttpStatus(
    Code.Unavailable,
    502,
    `Provider ${provider} could not be reached: ${cause}`,
  );
}
