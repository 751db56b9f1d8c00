import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { pickRateLimitHeaders } from "../domain/rate-limit-headers.js";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { ErrorMetadataSchema } from "../gen/railgate/common/v1/error_metadata_pb.js";
import { errorInfoOf, errorMetadataOf } from "../platform/rpc/errors.js";
import { errorStatusOf } from "./error-status.js";

/** The longest message a client reads; longer ones (never expected) are cut. */
export const MAX_REPLY_MESSAGE_CHARS = 1000;

/** An error the gateway answers directly, with its HTTP status. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface ErrorReply {
  status: number;
  message: string;
  headers: Record<string, string>;
  /** `error.metadata` of the body, when the service attached some (see withErrorMetadata). */
  metadata?: Record<string, unknown>;
}

/** The error's metadata detail as JSON with the proto's field names; undefined when absent or empty. */
function metadataJson(err: ConnectError): Record<string, unknown> | undefined {
  const metadata = errorMetadataOf(err);
  if (!metadata) return undefined;
  const json = toJson(ErrorMetadataSchema, metadata, { useProtoFieldName: true }) as Record<
    string,
    unknown
  >;
  return Object.keys(json).length > 0 ? json : undefined;
}

function bounded(message: string): string {
  return message.length <= MAX_REPLY_MESSAGE_CHARS
    ? message
    : `${message.slice(0, MAX_REPLY_MESSAGE_CHARS - 1)}…`;
}

/**
 * A ResourceExhausted that gives no reason of ours comes from Connect's own
 * message size limits (readMaxBytes/writeMaxBytes, on either side): the request
 * was too large, not rate limited (every ResourceExhausted of ours names its reason).
 */
function isMessageTooLarge(err: ConnectError): boolean {
  return err.code === Code.ResourceExhausted && errorInfoOf(err) === undefined;
}

/** The 5xx statuses whose reasons are the client's to read (upstreams, the store). */
const TOLD_STATUSES = new Set([502, 503, 524, 529]);

/**
 * What a client reads of a 5xx from a service. A failure a service reports on purpose carries a
 * reason (withReason: a provider's failure, the store's outage) and a message written for the
 * client, naming the provider and the kind of failure. One without a reason did not come from a
 * service's decision: the gRPC hop itself (grpc-js says "No connection established. Last error:
 * connect ECONNREFUSED 10.0.3.7:50052", or "Deadline exceeded ... remote_addr=..."), a bug, an
 * internal code. Its words are for the log (the gateway logs every 5xx with the request id),
 * never for the client: it gets a fixed message by status.
 */
function serverErrorMessage(err: ConnectError, status: number): string {
  const reason = errorInfoOf(err)?.reason ?? ErrorReason.UNSPECIFIED;
  if (reason !== ErrorReason.UNSPECIFIED && TOLD_STATUSES.has(status))
    return bounded(err.rawMessage);
  if (status === 503)
    return "Service unavailable: an internal service is not answering; retry shortly";
  if (status === 524) return "Request timed out: an internal service did not answer in time";
  return "Internal server error";
}

/** Every error becomes `{ error: { code, message } }`; unexpected ones say nothing internal. */
export function errorReply(err: unknown): ErrorReply {
  if (err instanceof HttpError)
    return { status: err.status, message: bounded(err.message), headers: err.headers };
  if (err instanceof ConnectError) {
    if (isMessageTooLarge(err)) {
      return {
        status: 413,
        message: "Request too large: it exceeds the size an internal message may have",
        headers: {},
      };
    }
    const { status, retryAfterSeconds } = errorStatusOf(err);
    const headers: Record<string, string> = {};
    if (retryAfterSeconds !== undefined) headers["retry-after"] = String(retryAfterSeconds);
    Object.assign(headers, pickRateLimitHeaders(err.metadata));
    const message = status >= 500 ? serverErrorMessage(err, status) : bounded(err.rawMessage);
    const reply: ErrorReply = { status, message, headers };
    // Only client errors carry facts for the client; a 5xx says nothing internal.
    const metadata = status < 500 ? metadataJson(err) : undefined;
    if (metadata) reply.metadata = metadata;
    return reply;
  }
  return { status: 500, message: "Internal server error", headers: {} };
}
