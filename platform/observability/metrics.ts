import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/**
 * The process's one Prometheus registry. Every module that counts something imports its
 * metric from here, so the all-in-one process (npm start) exposes one registry and each
 * split process (gateway, guardrail, speech) exposes only what it runs.
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

/**
 * Each speech endpoint's circuit breaker in this process: 0 closed, 1 half-open (a probe in
 * flight), 2 open (skipped). A series appears once the endpoint first fails.
 */
export const endpointBreakerState = new Gauge({
  name: "railgate_speech_endpoint_breaker_state",
  help: "Circuit breaker of a speech endpoint in this process: 0 closed, 1 half-open, 2 open",
  labelNames: ["model", "provider"] as const,
  registers: [registry],
});

/** A speech endpoint's live measurements, as the fail-over keeps them (updated in place). */
export interface EndpointMeasureView {
  readonly ttfbMs?: number;
  readonly throughputBps?: number;
}

/**
 * The measurements behind the two gauges below, by model and provider: read when the gauges
 * are collected (a scrape), not set on every request. Setting a labelled gauge hashes its
 * labels (sorted names, joined) each time: twice per proxied request, 2-3% of the CPU of
 * `npm start`'s speech path at 1 connection (bench/HISTORY.md).
 */
const endpointMeasures = new Map<
  string,
  { model: string; provider: string; m: EndpointMeasureView }
>();

/**
 * Points the gauges at an endpoint's measurements object: its later changes show at the next
 * collection. The object last published for a model and provider wins (one fail-over per
 * speech process).
 */
export function publishEndpointMeasure(
  model: string,
  provider: string,
  m: EndpointMeasureView,
): void {
  endpointMeasures.set(`${model}\u0000${provider}`, { model, provider, m });
}

/** The live measurements provider.sort ranks endpoints by (moving averages, this process). */
export const endpointTimeToFirstByte = new Gauge({
  name: "railgate_speech_endpoint_ttfb_seconds",
  help: "Moving average of a speech endpoint's time to first byte, as this process measured it",
  labelNames: ["model", "provider"] as const,
  registers: [registry],
  collect() {
    for (const { model, provider, m } of endpointMeasures.values())
      if (m.ttfbMs !== undefined) this.labels(model, provider).set(m.ttfbMs / 1000);
  },
});

export const endpointThroughput = new Gauge({
  name: "railgate_speech_endpoint_throughput_bytes_per_second",
  help: "Moving average of a speech endpoint's audio bytes per second after its first byte",
  labelNames: ["model", "provider"] as const,
  registers: [registry],
  collect() {
    for (const { model, provider, m } of endpointMeasures.values())
      if (m.throughputBps !== undefined) this.labels(model, provider).set(m.throughputBps);
  },
});

export const encoderStarts = new Counter({
  name: "railgate_speech_encoder_starts_total",
  help: "Streams the embedded engine encoded to aac or flac, by format and by whether their encoder was started ahead of them (primed true) or with them (false: the first byte waited for the encoder's worker thread)",
  labelNames: ["format", "primed"] as const,
  registers: [registry],
});

export const audioCacheLookups = new Counter({
  name: "railgate_audio_cache_lookups_total",
  help: "Speech requests of opted-in workspaces by what the audio cache did: hit (a stored clip), collapsed (joined an identical synthesis in progress) or miss (synthesized)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const audioCacheStores = new Counter({
  name: "railgate_audio_cache_stores_total",
  help: "Completed clips handed to the audio cache, by outcome: stored, exists, too_large (over the workspace's budget or the memory cap), failed (the store did not answer)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const audioCacheEvictions = new Counter({
  name: "railgate_audio_cache_evictions_total",
  help: "Clips evicted (least recently used first) to keep a workspace's audio cache within its byte budget",
  registers: [registry],
});

export const webhookAttempts = new Counter({
  name: "railgate_webhook_attempts_total",
  help: "Budget-alert delivery attempts by outcome: delivered, retry (failed, tried again later) or failed (given up)",
  labelNames: ["outcome"] as const,
  registers: [registry],
});

export const budgetAlertsQueued = new Counter({
  name: "railgate_budget_alerts_queued_total",
  help: "Budget-alert events queued for delivery, by type (once per webhook and window)",
  labelNames: ["type"] as const,
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

/** One guardrail's spend in its current window, as the guardrail gauges report it. */
export interface GuardrailBudgetSample {
  workspaceId: string;
  guardrailId: string;
  /** Spend of the keys charged under the guardrail, summed. */
  keySpendUsd: number;
  /** Spend of the members charged under the guardrail, summed. */
  memberSpendUsd: number;
  /** Keys and members that spent in the window. */
  entities: number;
  /** Only for guardrails with a limit_usd. */
  budget?: { limitUsd: number; remainingUsd: number };
}

/**
 * Readers of guardrail state (one per guardrail server in this process). Each
 * caches its reading briefly and answers undefined when the store failed, so a
 * scrape asks each once per gauge without hammering the store.
 */
const guardrailBudgets = new Set<() => Promise<GuardrailBudgetSample[] | undefined>>();

/** Reports `read`'s samples in the guardrail gauges until the returned function is called. */
export function trackGuardrailBudgets(
  read: () => Promise<GuardrailBudgetSample[] | undefined>,
): () => void {
  guardrailBudgets.add(read);
  return () => guardrailBudgets.delete(read);
}

type BudgetLabel = "workspace_id" | "guardrail_id" | "entity";

/**
 * Sets a gauge from every reader at scrape time. Reset first: a deleted
 * guardrail's series disappears, and so does every series of a reader whose
 * store failed (rather than reporting stale numbers).
 */
function budgetGauge<L extends BudgetLabel>(
  name: string,
  help: string,
  labelNames: readonly L[],
  set: (gauge: Gauge<L>, s: GuardrailBudgetSample) => void,
): Gauge<L> {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const read of guardrailBudgets) {
        for (const s of (await read()) ?? []) set(this, s);
      }
    },
  });
}

const ids = (s: GuardrailBudgetSample) => ({
  workspace_id: s.workspaceId,
  guardrail_id: s.guardrailId,
});

budgetGauge(
  "railgate_guardrail_spend_usd",
  "Spend charged under a guardrail in its current window, summed over the keys or the members",
  ["workspace_id", "guardrail_id", "entity"],
  (g, s) => {
    g.set({ ...ids(s), entity: "key" }, s.keySpendUsd);
    g.set({ ...ids(s), entity: "member" }, s.memberSpendUsd);
  },
);

budgetGauge(
  "railgate_guardrail_spending_entities",
  "Keys and members that spent under a guardrail in its current window",
  ["workspace_id", "guardrail_id"],
  (g, s) => g.set(ids(s), s.entities),
);

budgetGauge(
  "railgate_guardrail_limit_usd",
  "A guardrail's limit_usd: the limit of each key and member it governs, per window",
  ["workspace_id", "guardrail_id"],
  (g, s) => {
    if (s.budget) g.set(ids(s), s.budget.limitUsd);
  },
);

budgetGauge(
  "railgate_guardrail_budget_remaining_usd",
  "What the guardrail's most-spent key or member may still spend in the current window",
  ["workspace_id", "guardrail_id"],
  (g, s) => {
    if (s.budget) g.set(ids(s), s.budget.remainingUsd);
  },
);

/** One metered workspace's credits, as the credit gauges report them. */
export interface CreditSample {
  workspaceId: string;
  balanceUsd: number;
  /** Every credit ever added to the workspace. */
  addedUsd: number;
}

/** Readers of the workspaces' credits (one per account service in this process), as the budgets'. */
const creditReaders = new Set<() => Promise<CreditSample[] | undefined>>();

/** Reports `read`'s samples in the credit gauges until the returned function is called. */
export function trackCredits(read: () => Promise<CreditSample[] | undefined>): () => void {
  creditReaders.add(read);
  return () => creditReaders.delete(read);
}

function creditGauge(name: string, help: string, value: (s: CreditSample) => number): void {
  new Gauge({
    name,
    help,
    labelNames: ["workspace_id"] as const,
    registers: [registry],
    async collect() {
      // Reset first, as the budget gauges: a store that failed reports nothing, never stale numbers.
      this.reset();
      for (const read of creditReaders) {
        for (const s of (await read()) ?? []) this.set({ workspace_id: s.workspaceId }, value(s));
      }
    },
  });
}

creditGauge(
  "railgate_workspace_credits_usd",
  "A metered workspace's credit balance (unmetered workspaces have no series)",
  (s) => s.balanceUsd,
);

creditGauge(
  "railgate_workspace_credits_added_usd",
  "Every credit ever added to a metered workspace (so the balance can be read as a share of it)",
  (s) => s.addedUsd,
);
