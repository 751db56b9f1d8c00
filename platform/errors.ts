import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import {
  type ErrorMetadata,
  ErrorMetadataSchema,
} from "../gen/railgate/common/v1/error_metadata_pb.js";

/**
 * Statuses the spec lists that gRPC codes cannot express (402, 413, 524, 529,
 * and 409 vs 400 nuances) travel in this metadata key, so the gateway can
 * answer with the exact HTTP status.
 */
export const HTTP_STATUS_HEADER = "railgate-http-status";
export const RETRY_AFTER_HEADER = "railgate-retry-after";

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

/** An error with an explicit HTTP status for the gateway (e.g. 402, 413, 529). */
export function withHttpStatus(
  code: Code,
  status: number,
  message: string,
  retryAfterSeconds?: number,
): ConnectError {
  const metadata = new Headers({ [HTTP_STATUS_HEADER]: String(status) });
  if (retryAfterSeconds !== undefined) {
    metadata.set(RETRY_AFTER_HEADER, String(retryAfterSeconds));
  }
  return new ConnectError(message, code, metadata);
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

const statusByCode: Partial<Record<Code, number>> = {
  [Code.InvalidArgument]: 400,
  [Code.FailedPrecondition]: 400,
  [Code.OutOfRange]: 400,
  [Code.Unauthenticated]: 401,
  [Code.PermissionDenied]: 403,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.Aborted]: 409,
  [Code.ResourceExhausted]: 429,
  [Code.Canceled]: 499,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.DeadlineExceeded]: 524,
};

/** The one place that maps an error from a service to the HTTP status clients see. */
export function httpStatusOf(err: ConnectError): number {
  const explicit = Number(err.metadata.get(HTTP_STATUS_HEADER));
  if (Number.isInteger(explicit) && explicit >= 400 && explicit <= 599) return explicit;
  return statusByCode[err.code] ?? 500;
}
