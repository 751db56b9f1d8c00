import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import type { RegionName } from "../domain/enums.js";
import {
  healthProbesTraced,
  startSpan,
  tracingEnabled,
} from "../platform/observability/tracing.js";
import type { Exchange } from "./access-log.js";

/** The health route's path: its probes get no span unless RAILGATE_TRACE_HEALTH_PROBES asks for them. */
const HEALTH_PATH = "/healthz";

function isHealthProbe(req: IncomingMessage): boolean {
  const target = req.url ?? "";
  const q = target.indexOf("?");
  return (q === -1 ? target : target.slice(0, q)) === HEALTH_PATH;
}

/**
 * Runs one request's handling inside its server span: the trace continues the caller's W3C
 * `traceparent` (or starts one), and every gRPC call made meanwhile carries it on
 * (platform/observability/tracing.ts injectTraceHeaders). The span ends when the response closes,
 * named by the route that matched. Off, and for a health probe (unless RAILGATE_TRACE_HEALTH_PROBES):
 * `handle` runs as it is, outside any trace, so the health calls it makes start none either.
 */
export function withRequestSpan(
  req: IncomingMessage,
  res: ServerResponse,
  region: RegionName,
  exchange: Exchange,
  handle: () => Promise<void>,
): Promise<void> {
  if (!tracingEnabled()) return handle();
  if (!healthProbesTraced() && isHealthProbe(req)) return context.with(ROOT_CONTEXT, handle);
  const parent = propagation.extract(ROOT_CONTEXT, req.headers);
  const method = req.method ?? "GET";
  const span = startSpan(
    method,
    SpanKind.SERVER,
    {
      "http.request.method": method,
      "railgate.region": region,
      "railgate.request_id": exchange.id,
    },
    parent,
  );
  res.once("close", () => {
    span.updateName(`${method} ${exchange.route}`);
    span.setAttributes({
      "http.route": exchange.route,
      "http.response.status_code": res.statusCode,
    });
    if (exchange.keyHash) span.setAttribute("railgate.key_hash", exchange.keyHash.slice(0, 8));
    // Server spans fail on 5xx only: a 4xx is the client's error, not the server's.
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!res.writableFinished) span.setAttribute("railgate.client_went_away", true);
    span.end();
  });
  return context.with(trace.setSpan(parent, span), handle);
}
