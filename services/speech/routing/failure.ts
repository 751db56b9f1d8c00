import { ConnectError } from "@connectrpc/connect";
import { upstreamStatusOf } from "../engines/upstream-status.js";

/** How one attempt at an endpoint failed, for the retry decision and the routing record. */
export interface AttemptFailure {
  /** The upstream's HTTP status, when it answered one. */
  status?: number;
  /** Worth another try at the same endpoint: a 429 or 5xx (overloaded or briefly down). */
  retryable: boolean;
  /** For the record: the client-safe message (never a provider's own words or an address). */
  reason: string;
}

export function attemptFailure(err: unknown): AttemptFailure {
  const status = upstreamStatusOf(err);
  const retryable = status !== undefined && (status === 429 || status >= 500);
  // A ConnectError's message is written for the client; anything else is an engine's own
  // exception, whose words stay in the log.
  const reason = err instanceof ConnectError ? err.rawMessage : "engine error";
  return { status, retryable, reason };
}
