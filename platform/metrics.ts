import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's one Prometheus registry. Every module that counts something imports its
 * metric from here, so the all-in-one process (npm start) exposes one registry and each
 * split process (gateway, guardrail, speech) exposes only what it runs.
 */
export const registry = new Registry();

/** Gateway requests, by the route's pattern (never the raw path: ids would explode the series). */
export const httpRequests = new Counter({
  name: "railgate_http_requests_total",
  help: "HTTP requests answered by the gateway, by route pattern, method, status and region",
  labelNames: ["route", "method", "status", "region"] as const,
  registers: [registry],
});

/** Speech latency buckets: first audio is expected well under a second, whole streams in seconds. */
const SPEECH_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const speechTimeToFirstByte = new Histogram({
  name: "railgate_speech_time_to_first_byte_seconds",
  help: "Time from the speech request reaching the service to its first audio, by provider",
  labelNames: ["provider"] as const,
  buckets: SPEECH_BUCKETS,
  registers: [registry],
});

export const speechDuration = new Histogram({
  name: "railgate_speech_duration_seconds",
  help: "Whole duration of a speech stream in the service, by provider and final status",
  labelNames: ["provider", "status"] as const,
  buckets: SPEECH_BUCKETS,
  registers: [registry],
});

export const upstreamErrors = new Counter({
  name: "railgate_upstream_errors_total",
  help: "Speech endpoints that failed before their first byte, by provider",
  labelNames: ["provider"] as const,
  registers: [registry],
});

export const guardrailFilterActions = new Counter({
  name: "railgate_guardrail_filter_actions_total",
  help: "Content filter hits acted on, by guardrail filter slug and action",
  labelNames: ["slug", "action"] as const,
  registers: [registry],
});

/** Why a speech request was refused before any provider was asked. */
export type AdmissionRefusal =
  | "rate-limit"
  | "credits"
  | "key-limit"
  | "budget"
  | "model"
  | "region"
  | "filter-block";

export const admissionRefusals = new Counter({
  name: "railgate_admission_refusals_total",
  help: "Speech requests refused by admission, by reason",
  labelNames: ["reason"] as const,
  registers: [registry],
});

export const grpcServerCalls = new Counter({
  name: "railgate_grpc_server_calls_total",
  help: "gRPC calls handled by the services, by service, method and final code",
  labelNames: ["service", "method", "code"] as const,
  registers: [registry],
});

/** Engine pools that report their queued jobs; read only when Prometheus scrapes. */
const engineQueues = new Set<() => number>();

/** Counts `depth` into the engine queue gauge until the returned function is called. */
export function trackEngineQueue(depth: () => number): () => void {
  engineQueues.add(depth);
  return () => engineQueues.delete(depth);
}

new Gauge({
  name: "railgate_engine_queue_depth",
  help: "Speech engine jobs waiting for a free worker",
  registers: [registry],
  collect() {
    let n = 0;
    for (const depth of engineQueues) n += depth();
    this.set(n);
  },
});
