import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ErrorInfo,
  ErrorInfoSchema,
  type ErrorReason,
} from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type ErrorMetadata,
  ErrorMetadataSchema,
} from "../../gen/railgate/common/v1/error_metadata_pb.js";

/**
 * Plain input validation: the message names the field and the code says the
 * rest, so it carries no reason (a generic one would only repeat the code).
 * A refusal of well-formed input gives its reason (withReason and below).
 */
export function invalidArgument(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
/** A well-formed request this deployment cannot serve as configured (no database, say). */
export function failedPrecondition(message: string): ConnectError {
  return new ConnectError(message, Code.FailedPrecondition);
}

// Refusals take their reason as an argument, so none can be raised without one.
export function notFound(reason: ErrorReason, message: string): ConnectError {
  return withReason(Code.NotFound, reason, message);
}
export function permissionDenied(reason: ErrorReason, message: string): ConnectError {
  return withReason(Code.PermissionDenied, reason, message);
}
export function unauthenticated(reason: ErrorReason, message: string): ConnectError {
  return withReason(Code.Unauthenticated, reason, message);
}
/** A concurrency conflict (ABORTED): worth retrying. */
export function conflict(reason: ErrorReason, message: string): ConnectError {
  return withReason(Code.Aborted, reason, message);
}
export function alreadyExists(reason: ErrorReason, message: string): ConnectError {
  return withReason(Code.AlreadyExists, reason, message);
}

/**
 * An error with a typed reason (ErrorInfo detail) beside its gRPC code, for
 * what the code alone cannot say: the spec's 402, 413, 524 and 529, a 409 that
 * is not a retry, a rate limit's Retry-After. The service says what happened;
 * which HTTP status that is, is the gateway's choice (gateway/error-status.ts).
 * As a typed detail it crosses gRPC (status details) and the in-process
 * transport alike, and any gRPC client can read it.
 *
 * `cause` is what went wrong inside (an exception, a provider's own words, an
 * address): it stays in the process, where the service logs it with the
 * request id (platform/rpc/grpc-server.ts), and never enters the message.
 */
export function withReason(
  code: Code,
  reason: ErrorReason,
  message: string,
  retryAfterSeconds?: number,
  cause?: unknown,
): ConnectError {
  const info = create(
    ErrorInfoSchema,
    retryAfterSeconds === undefined ? { reason } : { reason, retryAfterSeconds },
  );
  return new ConnectError(
    message,
    code,
    undefined,
    [{ desc: ErrorInfoSchema, value: info }],
    cause,
  );
}

/** The reason an error carries, if any (see withReason). */
export function errorInfoOf(err: ConnectError): ErrorInfo | undefined {
  return err.findDetails(ErrorInfoSchema)[0];
}

/**
 * A refusal that also carries structured facts for the client (rendered by
 * the gateway as `error.metadata`), attached as a typed error detail beside
 * its reason so it crosses gRPC (status details) and the in-process transport alike.
 */
export function withErrorMetadata(
  code: Code,
  reason: ErrorReason,
  message: string,
  metadata: MessageInitShape<typeof ErrorMetadataSchema>,
): ConnectError {
  const err = withReason(code, reason, message);
  err.details.push({ desc: ErrorMetadataSchema, value: create(ErrorMetadataSchema, metadata) });
  return err;
}

/** The metadata an error carries, if any (see withErrorMetadata). */
export function errorMetadataOf(err: ConnectError): ErrorMetadata | undefined {
  return err.findDetails(ErrorMetadataSchema)[0];
}

/**
 * One line for the log about what went wrong inside: an error's name, message and code, and
 * those of its causes (a provider's `fetch failed` says little; its cause names the address).
 * No stack: the line is about the outside failure, not where our code noticed it.
 */
export function errorDetail(err: unknown): string {
  const parts: string[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 4; depth++) {
    if (!(e instanceof Error)) {
      parts.push(String(e).slice(0, 500));
      break;
    }
    const code = (e as NodeJS.ErrnoException).code;
    const text = e instanceof ConnectError ? e.rawMessage : e.message;
    parts.push(`${e.name}: ${text.slice(0, 500)}${typeof code === "string" ? ` (${code})` : ""}`);
    e = e.cause;
  }
  return parts.join("; caused by ");
}
