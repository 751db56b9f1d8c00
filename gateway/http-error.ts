import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorMetadataSchema } from "../gen/railgate/common/v1/error_metadata_pb.js";
import { errorInfoOf, errorMetadataOf } from "../platform/errors.js";
import { pickRateLimitHeaders } from "../platform/rate-limit-headers.js";
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
    // Internal and unknown codes carry no detail worth leaking.
    const message =
      status >= 500 && status !== 502 && status !== 503 && status !== 524 && status !== 529
        ? "Internal server error"
        : bounded(err.rawMessage);
    const reply: ErrorReply = { status, message, headers };
    // Only client errors carry facts for the client; a 5xx says nothing internal.
    const metadata = status < 500 ? metadataJson(err) : undefined;
    if (metadata) reply.metadata = metadata;
    return reply;
  }
  return { status: 500, message: "Internal server error", headers: {} };
}
