import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ErrorInfo,
  ErrorInfoSchema,
  type ErrorReason,
} from "../gen/railgate/common/v1/error_info_pb.js";
import {
  type ErrorMetadata,
  ErrorMetadataSchema,
} from "../gen/railgate/common/v1/error_metadata_pb.js";

export function invalidArgument(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}
export function notFound(message: string): ConnectError {
  return new ConnectError(message, Code.NotFound);
}
export function permissionDenied(message: string): ConnectError {
  return new ConnectError(message, Code.PermissionDenied);
}
export function unauthenticated(message: string): ConnectError {
  return new ConnectError(message, Code.Unauthenticated);
}
export function conflict(message: string): ConnectError {
  return new ConnectError(message, Code.Aborted);
}
export function alreadyExists(message: string): ConnectError {
  return new ConnectError(message, Code.AlreadyExists);
}

/**
 * An error with a typed reason (ErrorInfo detail) beside its gRPC code, for
 * what the code alone cannot say: the spec's 402, 413, 524 and 529, a 409 that
 * is not a retry, a rate limit's Retry-After. The service says what happened;
 * which HTTP status that is, is the gateway's choice (gateway/error-status.ts).
 * As a typed detail it crosses gRPC (status details) and the in-process
 * transport alike, and any gRPC client can read it.
 */
export function withReason(
  code: Code,
  reason: ErrorReason,
  message: string,
  retryAfterSeconds?: number,
): ConnectError {
  const info = create(
    ErrorInfoSchema,
    retryAfterSeconds === undefined ? { reason } : { reason, retryAfterSeconds },
  );
  return new ConnectError(message, code, undefined, [{ desc: ErrorInfoSchema, value: info }]);
}

/** The reason an error carries, if any (see withReason). */
export function errorInfoOf(err: ConnectError): ErrorInfo | undefined {
  return err.findDetails(ErrorInfoSchema)[0];
}

/**
 * An error that carries structured facts for the client (rendered by the
 * gateway as `error.metadata`), attached as a typed error detail so it
 * crosses gRPC (status details) and the in-process transport alike.
 */
export function withErrorMetadata(
  code: Code,
  message: string,
  metadata: MessageInitShape<typeof ErrorMetadataSchema>,
): ConnectError {
  return new ConnectError(message, code, undefined, [
    { desc: ErrorMetadataSchema, value: create(ErrorMetadataSchema, metadata) },
  ]);
}

/** The metadata an error carries, if any (see withErrorMetadata). */
export function errorMetadataOf(err: ConnectError): ErrorMetadata | undefined {
  return err.findDetails(ErrorMetadataSchema)[0];
}
