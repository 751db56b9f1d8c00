import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's one Prometheus registry, with the series every process has (HTTP, gRPC, store,
 * log writers); Railgate's own series (domain/metrics.ts) register in it too, so the all-in-one
 * process (npm start) exposes one registry and each split process (gateway, control plane,
 * speech) exposes only what it runs.
 */
export const registry = new Registry();

/**
 * prom-client's process series (process_cpu_seconds_total, process_resident_memory_bytes,
 * nodejs_eventloop_lag_*, nodejs_gc_duration_seconds, nodejs_heap_*...) in every process: what
 * an operator looks at first when latency rises. They cost a few reads of /proc and of V8's heap
 * statistics per scrape; the event-loop delay histogram is sampled by libuv, not by a timer here.
 */
collectDefaultMetrics({ register: registry });

/** Gateway requests, by the route's pattern (never the raw path: ids would explode the series). */
export const httpRequests = new Counter({
  name: "railgate_http_requests_total",
  help: "HTTP requests answered by the gateway, by route pattern, method, status and region",
  labelNames: ["route", "method", "status", "region"] as const,
  registers: [registry],
});

/**
 * Gateway request latency buckets: management calls answer in milliseconds, a speech response
 * lasts as long as its audio (the histogram times the whole response, up to its last byte).
 */
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Same labels as railgate_http_requests_total but the region: latency does not depend on it. */
export const httpRequestDuration = new Histogram({
  name: "railgate_http_request_duration_seconds",
  help: "Time from a gateway request's arrival to its response's end, by route pattern, method and status",
  labelNames: ["route", "method", "status"] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

export const grpcServerCalls = new Counter({
  name: "railgate_grpc_server_calls_total",
  help: "gRPC calls handled by the services, by service, method and final code",
  labelNames: ["service", "method", "code"] as const,
  registers: [registry],
});

/** gRPC call buckets: a unary call takes a millisecond or two, a speech stream seconds. */
const GRPC_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];

export const grpcServerDuration = new Histogram({
  name: "railgate_grpc_server_duration_seconds",
  help: "Time a service took to handle a call (a stream: until it ended), by service, method and final code",
  labelNames: ["service", "method", "code"] as const,
  buckets: GRPC_BUCKETS,
  registers: [registry],
});

export const grpcClientDuration = new Histogram({
  name: "railgate_grpc_client_duration_seconds",
  help: "Time the gateway's calls to the services took as it saw them (a stream: until it ended), by service, method and final code",
  labelNames: ["service", "method", "code"] as const,
  buckets: GRPC_BUCKETS,
  registers: [registry],
});

/**
 * Stores that report whether they answer (one per store this process opened); each caches its
 * answer briefly so a scrape costs at most one PING, and answers false when the store did not.
 */
const stores = new Map<() => Promise<boolean>, "redis" | "memory">();

/** Reports `up` in railgate_store_up until the returned function is called. */
export function trackStore(kind: "redis" | "memory", up: () => Promise<boolean>): () => void {
  stores.set(up, kind);
  return () => stores.delete(up);
}

new Gauge({
  name: "railgate_store_up",
  help: "1 when the store (Redis, or the embedded store) answered its last check, else 0; by store kind",
  labelNames: ["store"] as const,
  registers: [registry],
  async collect() {
    this.reset();
    // Several stores of one kind (tests run systems side by side): down if any one is.
    const byKind = new Map<string, boolean>();
    const readings = await Promise.all(
      [...stores].map(async ([up, kind]) => [kind, await up()] as const),
    );
    for (const [kind, up] of readings) byKind.set(kind, (byKind.get(kind) ?? true) && up);
    for (const [kind, up] of byKind) this.set({ store: kind }, up ? 1 : 0);
  },
});

/** Records of the batched log writers (request log, audit log...), by writer and what became of them. */
export const logRecords = new Counter({
  name: "railgate_log_records_total",
  help: "Records the log writers wrote to the database or dropped (queue full, refused, shutting down)",
  labelNames: ["writer", "result"] as const,
  registers: [registry],
});

/** Log writers that report their waiting records; read only when Prometheus scrapes. */
const logQueues = new Map<() => number, string>();

/** Reports `depth` as writer `name`'s queue until the returned function is called. */
export function trackLogQueue(name: string, depth: () => number): () => void {
  logQueues.set(depth, name);
  return () => logQueues.delete(depth);
}

new Gauge({
  name: "railgate_log_queue_depth",
  help: "Log records waiting for the database, by writer",
  labelNames: ["writer"] as const,
  registers: [registry],
  collect() {
    this.reset();
    const sums = new Map<string, number>();
    for (const [depth, name] of logQueues) sums.set(name, (sums.get(name) ?? 0) + depth());
    for (const [name, n] of sums) this.set({ writer: name }, n);
  },
});
