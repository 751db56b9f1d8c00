import { LogDedupe } from "../platform/observability/log-dedupe.js";
import { componentLogger } from "../platform/observability/logger.js";

const log = componentLogger("gateway");
const repeats = new LogDedupe();

/** What the gateway knows of a request that failed with a 5xx. */
export interface FailedRequest {
  status: number;
  url: string | undefined;
  requestId: string;
  /** The client had gone away (or a shutdown cut it) before the failure. */
  clientGone: boolean;
}

/**
 * The log line of a request answered 5xx. Only a 500 is a fault of ours (error, with a stack
 * when the error is a bug); 502/503/504/524/529 are outcomes an operator watches but need not
 * chase one by one (a provider refused or timed out, the store is away): warn, no stack. A
 * client gone first gets no line here (its access line says `completed: false`). Identical
 * failures within a window are one line and a count (LogDedupe), whoever sends them.
 */
export function logFailedRequest(err: unknown, failed: FailedRequest): void {
  if (failed.clientGone) {
    log.debug({ requestId: failed.requestId, status: failed.status }, "client went away");
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  const fault = failed.status === 500;
  repeats.write(
    log,
    fault ? "error" : "warn",
    `${failed.status}\u0000${message}`,
    {
      err,
      status: failed.status,
      url: failed.url?.slice(0, 200),
      requestId: failed.requestId,
    },
    fault ? "request failed" : "request not served (a dependency failed)",
  );
}
