import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { CatalogEndpoint } from "../../../domain/catalog/types.js";
import {
  endpointBreakerState,
  publishEndpointMeasure,
  upstreamErrors,
} from "../../../domain/metrics.js";
import { ErrorReason } from "../../../gen/railgate/common/v1/error_info_pb.js";
import {
  RoutingOutcome,
  type RoutingStep,
  RoutingStepSchema,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { SpeechRoutingConfig } from "../../../platform/config/config.js";
import { LogDedupe } from "../../../platform/observability/log-dedupe.js";
import { componentLogger } from "../../../platform/observability/logger.js";
import { errorDetail, withReason } from "../../../platform/rpc/errors.js";
import { type BreakerState, CircuitBreakers } from "./breaker.js";
import { type EndpointMeasure, EndpointStats } from "./endpoint-stats.js";
import { attemptFailure } from "./failure.js";
import { withRouting } from "./steps.js";

const log = componentLogger("speech");
const upstreamFailures = new LogDedupe();

const BREAKER_VALUES: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** An attempt that reached its first piece of audio. */
export interface Started<S> {
  stream: AsyncGenerator<Uint8Array>;
  /** Whatever else the caller's attempt produced (what the adapter reported as spoken). */
  extra: S;
}

/** What open() hands back: the endpoint that answered, its stream past the first piece, the routing. */
export interface Opened<S> extends Started<S> {
  endpoint: CatalogEndpoint;
  first: IteratorResult<Uint8Array>;
  /** Every endpoint considered: this one "served", others "failed", "skipped" or "not_tried". */
  steps: RoutingStep[];
  /** Stops forwarding the request's abort to the attempt (call once the stream is done). */
  detach(): void;
}

export interface FailoverRequest<S> {
  modelId: string;
  /** The eligible endpoints, in the order routing chose. */
  endpoints: CatalogEndpoint[];
  /** Starts one attempt; the signal aborts it (the request's, or this attempt's own). */
  attempt(endpoint: CatalogEndpoint, signal: AbortSignal): Promise<Started<S>>;
  signal: AbortSignal;
  /** performance.now() past which no retry starts (the client's first-byte deadline). */
  deadline: number;
  requestId?: string;
}

export type RoutingSettings = Pick<
  SpeechRoutingConfig,
  "breakerFailures" | "breakerCooldownMs" | "retries" | "retryBackoffMs" | "retryBackoffMaxMs"
>;

/** Live health of one endpoint, as explain shows it. */
export interface EndpointHealth extends EndpointMeasure {
  breaker: BreakerState;
  consecutiveFailures: number;
}

/**
 * Health-aware fail-over of the speech service: endpoints are tried in routing's order until one
 * produces its first byte. An endpoint whose circuit breaker is open is skipped; one that answers
 * 429 or 5xx before its first byte is tried again after the others, after a jittered backoff
 * (full jitter: a random wait up to base * 2^(n-1), capped), at most `retries` times, and only
 * while the wait ends before the request's deadline. Once audio has been sent nothing is retried:
 * the stream is returned and its failures are the stream's. The time to first byte and the
 * throughput of every stream are measured here (provider.sort reads them).
 */
export class Failover {
  readonly breakers: CircuitBreakers;
  readonly stats: EndpointStats;
  /** key -> metric labels. */
  private readonly labels = new Map<string, { model: string; provider: string }>();

  constructor(
    private readonly settings: RoutingSettings,
    private readonly random: () => number = Math.random,
  ) {
    this.breakers = new CircuitBreakers({
      failures: settings.breakerFailures,
      cooldownMs: settings.breakerCooldownMs,
      onState: (key, state) => {
        const l = this.labels.get(key);
        if (l) endpointBreakerState.labels(l.model, l.provider).set(BREAKER_VALUES[state]);
      },
    });
    // The gauges read each endpoint's measurements when they are collected (a scrape): this
    // only points them at the object, which is updated in place.
    this.stats = new EndpointStats((key, m) => {
      const l = this.labels.get(key);
      if (l) publishEndpointMeasure(l.model, l.provider, m);
    });
  }

  key(modelId: string, provider: string): string {
    const key = `${modelId}\u0000${provider}`;
    if (!this.labels.has(key)) this.labels.set(key, { model: modelId, provider });
    return key;
  }

  /** provider.sort's view of a model's endpoints. */
  measure(modelId: string): (e: CatalogEndpoint) => EndpointMeasure {
    return (e) => this.stats.get(this.key(modelId, e.provider));
  }

  health(modelId: string, provider: string): EndpointHealth {
    const key = this.key(modelId, provider);
    return {
      ...this.stats.get(key),
      breaker: this.breakers.state(key),
      consecutiveFailures: this.breakers.consecutiveFailures(key),
    };
  }

  /** Full jitter: uniform in [0, min(max, base * 2^(n-1))]. */
  private backoff(retry: number): number {
    const { retryBackoffMs: base, retryBackoffMaxMs: max } = this.settings;
    return this.random() * Math.min(max, base * 2 ** (retry - 1));
  }

  async open<S>(req: FailoverRequest<S>): Promise<Opened<S>> {
    const { endpoints, signal } = req;
    const steps = endpoints.map((e) =>
      create(RoutingStepSchema, { provider: e.provider, outcome: RoutingOutcome.NOT_TRIED }),
    );
    let lastError: unknown;
    let pending = endpoints.map((_, i) => i);
    for (let round = 0; round <= this.settings.retries && pending.length > 0; round++) {
      if (round > 0) {
        const wait = this.backoff(round);
        // A retry that would start past the deadline helps nobody: the client has its 524 by then.
        if (performance.now() + wait >= req.deadline) break;
        try {
          await sleep(wait, undefined, { signal });
        } catch {
          throw new ConnectError("client cancelled the request", Code.Canceled);
        }
      }
      const again: number[] = [];
      for (const i of pending) {
        const endpoint = endpoints[i] as CatalogEndpoint;
        const step = steps[i] as RoutingStep;
        const key = this.key(req.modelId, endpoint.provider);
        const gate = this.breakers.acquire(key);
        if (!gate.allowed) {
          // Failed earlier in this request, it keeps that reason; never tried, it was skipped.
          if (step.attempts === 0) {
            step.outcome = RoutingOutcome.SKIPPED;
            step.reason = gate.reason;
          }
          continue;
        }
        step.attempts++;
        const attempt = new AbortController();
        const forward = () => attempt.abort(signal.reason);
        signal.addEventListener("abort", forward, { once: true });
        const began = performance.now();
        try {
          const started = await req.attempt(endpoint, attempt.signal);
          const first = await started.stream.next();
          const firstAt = performance.now();
          this.breakers.succeeded(key);
          this.stats.firstByte(key, firstAt - began);
          step.outcome = RoutingOutcome.SERVED;
          step.reason = "";
          step.status = 0;
          return {
            endpoint,
            first,
            extra: started.extra,
            stream: this.measured(key, started.stream, firstAt),
            steps,
            detach: () => signal.removeEventListener("abort", forward),
          };
        } catch (err) {
          signal.removeEventListener("abort", forward);
          attempt.abort();
          if (signal.aborted) {
            if (gate.probe) this.breakers.released(key);
            throw new ConnectError("client cancelled the request", Code.Canceled);
          }
          this.breakers.failed(key);
          const failure = attemptFailure(err);
          step.outcome = RoutingOutcome.FAILED;
          step.reason = failure.reason;
          step.status = failure.status ?? 0;
          if (failure.retryable) again.push(i);
          this.logFailure(endpoint, err, req.requestId);
          lastError = err;
        }
      }
      pending = again;
    }
    throw withRouting(this.failure(lastError, steps), steps);
  }

  private failure(lastError: unknown, steps: RoutingStep[]): unknown {
    if (lastError instanceof ConnectError) return lastError;
    if (lastError === undefined) {
      // Nothing was tried: every eligible endpoint's breaker is open.
      const skipped = steps.map((s) => s.provider).join(", ");
      return withReason(
        Code.Unavailable,
        ErrorReason.UPSTREAM_UNAVAILABLE,
        `Every eligible provider (${skipped}) is skipped after repeated failures (circuit breaker open); try again later`,
      );
    }
    // An engine's own exception (a crashed worker, a bug): its words stay in the log.
    const provider = steps.findLast((s) => s.outcome === RoutingOutcome.FAILED)?.provider;
    return withReason(
      Code.Unavailable,
      ErrorReason.UPSTREAM_ERROR,
      provider === undefined
        ? "Every eligible provider failed before producing audio"
        : `Provider ${provider} failed before producing audio`,
      undefined,
      lastError,
    );
  }

  private logFailure(endpoint: CatalogEndpoint, err: unknown, requestId?: string): void {
    // A provider down under load fails every request alike: one line and a count per window.
    const code = err instanceof ConnectError ? err.code : "none";
    upstreamFailures.write(
      log,
      "warn",
      `${endpoint.provider}\u0000${code}\u0000${err instanceof Error ? err.message : String(err)}`,
      { provider: endpoint.provider, detail: errorDetail(err), requestId },
      "endpoint failed before first byte",
    );
    upstreamErrors.labels(endpoint.provider).inc();
  }

  /**
   * The stream after its first piece, counting bytes until it ends: a stream that completes
   * gives the endpoint a throughput sample. Delegates without an extra generator, so each
   * piece costs one call more, not another async hop.
   */
  private measured(
    key: string,
    stream: AsyncGenerator<Uint8Array>,
    firstAt: number,
  ): AsyncGenerator<Uint8Array> {
    let bytes = 0;
    const stats = this.stats;
    const wrapper: AsyncGenerator<Uint8Array> = {
      async next() {
        const r = await stream.next();
        if (r.done) stats.streamed(key, bytes, performance.now() - firstAt);
        else bytes += r.value.byteLength;
        return r;
      },
      return: (v) => stream.return(v),
      throw: (e) => stream.throw(e),
      [Symbol.asyncIterator]() {
        return wrapper;
      },
    };
    return wrapper;
  }
}
