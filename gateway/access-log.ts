import type { IncomingMessage, ServerResponse } from "node:http";
import type { RegionName } from "../domain/enums.js";
import { componentLogger } from "../platform/observability/logger.js";
import { countRequest } from "./metrics.js";
import { requestIdOf } from "./request-id.js";

/** One line per request, at info (RAILGATE_LOG_LEVEL above info silences it). Exported for tests. */
export const accessLogger = componentLogger("access");

/** What the handler learns about a request as it goes, read when the response closes. */
export interface Exchange {
  readonly id: string;
  /** The route pattern that matched; "unmatched" for a 404/405 of the router. */
  route: string;
  /** The key's hash, once authenticated (only its first 8 characters are logged). */
  keyHash?: string;
}

const UNMATCHED = "unmatched";

/**
 * Gives the request its id (echoed on every response, errors included: set before any
 * handler writes a head) and, when the response closes, counts it in railgate_http_requests_total (and its duration)
 * and writes its access-log line. Never logged: the query string (it may carry anything), the
 * headers, the key itself.
 */
export function trackExchange(
  req: IncomingMessage,
  res: ServerResponse,
  region: RegionName,
): Exchange {
  const started = performance.now();
  // Bytes out are what the socket wrote meanwhile (headers included): no wrapping of write().
  const socket = req.socket;
  const bytesBefore = socket.bytesWritten;
  const exchange: Exchange = { id: requestIdOf(req), route: UNMATCHED };
  res.setHeader("x-request-id", exchange.id);
  res.once("close", () => {
    const method = req.method ?? "GET";
    const elapsedMs = performance.now() - started;
    countRequest(exchange.route, method, res.statusCode, region, elapsedMs / 1000);
    if (!accessLogger.isLevelEnabled("info")) return;
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    accessLogger.info(
      {
        requestId: exchange.id,
        method,
        route: exchange.route,
        path: (query === -1 ? url : url.slice(0, query)).slice(0, 512),
        status: res.statusCode,
        durationMs: Math.round(elapsedMs * 10) / 10,
        bytesOut: socket.bytesWritten - bytesBefore,
        region,
        key: exchange.keyHash?.slice(0, 8),
        // A response that did not finish: the client went away, or the stream was cut.
        completed: res.writableFinished,
      },
      "request",
    );
  });
  return exchange;
}
