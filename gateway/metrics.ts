import type { Counter } from "prom-client";
import { httpRequests, registry } from "../platform/metrics.js";
import type { RegionName } from "../platform/regions.js";
import type { Route } from "./context.js";

type Child = ReturnType<Counter<"route" | "method" | "status" | "region">["labels"]>;

/** Label children by route/method/status/region, made on first use: a request costs one lookup. */
const children = new Map<string, Child>();

/** Counts one answered request; `route` is the pattern that matched (or "unmatched"). */
export function countRequest(route: string, method: string, status: number, region: RegionName) {
  const key = `${route} ${method} ${status} ${region}`;
  let child = children.get(key);
  if (!child) {
    child = httpRequests.labels(route, method, String(status), region);
    children.set(key, child);
  }
  child.inc();
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
