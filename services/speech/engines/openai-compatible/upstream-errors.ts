import { Code, type ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../../../../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../../../../platform/rpc/errors.js";
import { markUpstreamStatus } from "../upstream-status.js";

/**
 * Upstream failures by reason, which the gateway answers in the spec's terms:
 * overload 529, unavailable 503, other provider errors 502, time-outs 524.
 * A client message names the provider and the kind of failure only: the
 * provider's own words, addresses and error codes go into the error's `cause`,
 * which the speech service logs with the request id (platform/rpc/grpc-server.ts)
 * and which never leaves the process.
 */
function upstreamError(
  code: Code,
  reason: ErrorReason,
  message: string,
  detail: unknown,
): ConnectError {
  return withReason(code, reason, message, undefined, detail);
}

export function upstreamHttpError(provider: string, status: number, detail: string): ConnectError {
  return markUpstreamStatus(httpError(provider, status, detail), status);
}

function httpError(provider: string, status: number, detail: string): ConnectError {
  const cause = `HTTP ${status}${detail ? `: ${detail.slice(0, 300)}` : ""}`;
  if (status === 429 || status === 529) {
    return upstreamError(
      Code.ResourceExhausted,
      ErrorReason.UPSTREAM_OVERLOADED,
      `Provider ${provider} is overloaded (HTTP ${status})`,
      cause,
    );
  }
  if (status === 503) {
    return upstreamError(
      Code.Unavailable,
      ErrorReason.UPSTREAM_UNAVAILABLE,
      `Provider ${provider} is temporarily unavailable (HTTP 503)`,
      cause,
    );
  }
  return upstreamError(
    Code.Unavailable,
    ErrorReason.UPSTREAM_ERROR,
    `Provider ${provider} returned an error (HTTP ${status})`,
    cause,
  );
}

export function upstreamTimeout(provider: string, ms: number, detail: unknown): ConnectError {
  return upstreamError(
    Code.DeadlineExceeded,
    ErrorReason.UPSTREAM_TIMEOUT,
    `Provider ${provider} timed out after ${ms} ms`,
    detail,
  );
}

/** Socket and TLS error codes, by the kind of failure a client may be told. */
const KINDS: [RegExp, string][] = [
  [/^ECONNREFUSED$/, "connection refused"],
  [/^(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL)$/, "host name not resolved"],
  [/^(EHOSTUNREACH|ENETUNREACH|EHOSTDOWN|ENETDOWN)$/, "host unreachable"],
  [/^(ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_SOCKET|UND_ERR_CLOSED)$/, "connection closed"],
  [/^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_|SELF_SIGNED_|UNABLE_TO_)/, "TLS handshake failed"],
];

/** The kind of a network failure, from its error code (or its cause's): never its message. */
export function networkFailureKind(err: unknown): string {
  for (let e = err, depth = 0; e && depth < 3; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code !== "string") continue;
    for (const [pattern, kind] of KINDS) if (pattern.test(code)) return kind;
  }
  return "network error";
}

export function upstreamUnreachable(provider: string, err: unknown): ConnectError {
  return upstreamError(
    Code.Unavailable,
    ErrorReason.UPSTREAM_UNREACHABLE,
    `Provider ${provider} could not be reached (${networkFailureKind(err)})`,
    err,
  );
}
