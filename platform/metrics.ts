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
