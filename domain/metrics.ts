import { Counter, Gauge, Histogram } from "prom-client";
import { registry } from "../platform/observability/metrics.js";

/**
 * Railgate's own series: speech, endpoints, the audio cache, admission, content filters,
 * budget alerts and the guardrail and credit gauges. They register in the process's one
 * registry (platform/observability/metrics.ts), beside the HTTP, gRPC, store and log series.
 */

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
