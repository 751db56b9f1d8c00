import type { RegionName } from "../domain/enums.js";
import { counterChild, histogramChild } from "../platform/observability/metric-children.js";
import { httpRequestDuration, httpRequests, registry } from "../platform/observability/metrics.js";
import type { Route } from "./context.js";

/**
 * Label children by route/method/status/region, made on first use: a request costs one lookup
 * (and platform/observability/metric-children.ts's children, no label hashing).
 */
const children = new Map<
  string,
  { count: ReturnType<typeof counterChild>; duration: ReturnType<typeof histogramChild> }
>();

/**
 * Counts one answered request and its duration in seconds; `route` is the pattern that matched
 * (or "unmatched").
 */
export function countRequest(
  route: string,
  method: string,
  status: number,
  region: RegionName,
  seconds: number,
) {
  const key = `${route} ${method} ${status} ${region}`;
  let child = children.get(key);
  if (!child) {
    child = {
      count: counterChild(httpRequests, { route, method, status: String(status), region }),
      duration: histogramChild(httpRequestDuration, { route, method, status: String(status) }),
    };
    children.set(key, child);
  }
  child.count.inc();
  child.duration.observe(seconds);
}

/**
 * GET /metrics in Prometheus text format, for a management key only: the series name guardrail
 * slugs, providers and traffic volume, which a standard key's holder has no business reading.
 * Prometheus sends the key with `authorization: { credentials: ... }` in its scrape config.
 */
export const metricsRoutes: Route[] = [
  {
    pattern: "/metrics",
    access: "management",
    docs: {
      GET: {
        summary: "Prometheus metrics of this process (management key)",
        status: 200,
        produces: "prometheus",
      },
    },
    methods: {
      async GET(ctx) {
        const body = await registry.metrics();
        ctx.res.writeHead(200, {
          "content-type": registry.contentType,
          "content-length": Buffer.byteLength(body),
          "cache-control": "no-store",
        });
        ctx.res.end(body);
      },
    },
  },
];
