import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { ApiKey } from "../../gen/railgate/account/v1/account_pb.js";

/**
 * When the key stopped being valid (its expires_at has passed), or undefined while it is
 * valid. One rule for the services' authentication and the gateway's key cache, so a cached
 * key expires on time without an invalidation.
 */
export function keyExpiredAt(key: ApiKey, nowMs = Date.now()): Date | undefined {
  if (!key.expiresAt) return undefined;
  const at = timestampMs(key.expiresAt);
  return at <= nowMs ? new Date(at) : undefined;
}

/** The 401's words: that the key expired, and when. */
export function keyExpiredMessage(at: Date): string {
  return `API key expired at ${at.toISOString()} (expires_at): create a new key, or ask an operator to extend it`;
}
