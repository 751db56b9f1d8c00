import { ConnectError } from "@connectrpc/connect";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { errorInfoOf, permissionDenied, unauthenticated } from "../../platform/rpc/errors.js";

/**
 * The refusals of a caller's key, for the HTTP API (gateway/auth.ts) and every RPC
 * (caller-auth.ts) alike: one bearer syntax, one text and one reason per refusal, so both
 * answer the same thing and the status comes from the one table (gateway/error-status.ts).
 * Only the name of the credential's carrier differs: an HTTP header, gRPC metadata.
 */
export const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** The secret of an authorization value, or undefined when it is not `Bearer <key>`. */
export function bearerSecret(value: string): string | undefined {
  return BEARER.exec(value)?.[1];
}

/** Where the key travels, as a client reads it in a refusal. */
export type KeyCarrier = "http" | "grpc";

const MISSING: Record<KeyCarrier, string> = {
  http: "Missing API key: send Authorization: Bearer <key>",
  grpc: "Missing API key: send authorization: Bearer <key>",
};

const MALFORMED: Record<KeyCarrier, string> = {
  http: "Malformed Authorization header: expected Bearer <key>",
  grpc: "Malformed authorization metadata: expected Bearer <key>",
};

export const keyRefusals = {
  missing: (carrier: KeyCarrier): ConnectError =>
    unauthenticated(ErrorReason.API_KEY_MISSING, MISSING[carrier]),
  malformed: (carrier: KeyCarrier): ConnectError =>
    unauthenticated(ErrorReason.API_KEY_MALFORMED, MALFORMED[carrier]),
  invalid: (): ConnectError => unauthenticated(ErrorReason.API_KEY_INVALID, "Invalid API key"),
  disabled: (): ConnectError =>
    unauthenticated(ErrorReason.API_KEY_DISABLED, "API key is disabled"),
  managementRequired: (): ConnectError =>
    permissionDenied(
      ErrorReason.MANAGEMENT_KEY_REQUIRED,
      "This operation requires a management key",
    ),
  standardRequired: (): ConnectError =>
    permissionDenied(
      ErrorReason.STANDARD_KEY_REQUIRED,
      "Management keys cannot call this endpoint: use a standard API key",
    ),
};

/** Refusals of a key that exists: the request has an owner, so a refused request is recorded. */
const OF_A_KNOWN_KEY: ReadonlySet<ErrorReason> = new Set([
  ErrorReason.API_KEY_DISABLED,
  ErrorReason.API_KEY_EXPIRED,
  ErrorReason.REGION_NOT_ALLOWED,
]);

/**
 * Whether `err` refused a known key (disabled, expired, or its region): such a refused request
 * goes in the request log. A missing, malformed or unknown key has no owner to log it for.
 */
export function isKnownKeyRefusal(err: unknown): err is ConnectError {
  if (!(err instanceof ConnectError)) return false;
  const reason = errorInfoOf(err)?.reason;
  return reason !== undefined && OF_A_KNOWN_KEY.has(reason);
}
