import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-node";
import { ContainedExporter } from "./contained-exporter.js";
import { componentLogger } from "./logger.js";

const log = componentLogger("tracing");

/**
 * How long shutdown waits for the last spans to reach the collector. An unreachable one made
 * the exporter retry for tens of seconds, past an orchestrator's kill timer: spans are not
 * worth a late or failed shutdown.
 */
export const SHUTDOWN_FLUSH_MS = 2_000;

/**
 * OpenTelemetry traces. Off unless configured (OTEL_TRACES_EXPORTER=otlp, or an
 * OTEL_EXPORTER_OTLP_ENDPOINT): then nothing is registered, the API hands out its no-op
 * tracer, and every helper here returns after one boolean check, so a request pays nothing.
 */
let tracer = trace.getTracer("railgate");

let provider: NodeTracerProvider | undefined;

/** RAILGATE_TRACE_HEALTH_PROBES: whether /healthz and grpc.health.v1 calls get spans. */
let traceHealthProbes = false;

/** Whether spans are recorded at all (the hot paths skip everything when not). */
export function tracingEnabled(): boolean {
  return provider !== undefined;
}

/**
 * Whether a health probe is traced: off by default, since load balancers and orchestrators
 * probe every few seconds and their spans would bury the requests' in the collector.
 */
export function healthProbesTraced(): boolean {
  return provider !== undefined && traceHealthProbes;
}

export interface TracingConfig {
  exporter: "otlp" | "none";
  /** OTLP/HTTP base URL (e.g. http://jaeger:4318); spans go to `<endpoint>/v1/traces`. */
  endpoint?: string;
  serviceName: string;
  /** RAILGATE_TRACE_HEALTH_PROBES. */
  healthProbes: boolean;
}

function install(
  exporter: SpanExporter,
  serviceName: string,
  batch: boolean,
  healthProbes: boolean,
): void {
  const next = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [batch ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter)],
  });
  // A provider registered before (a test's) is replaced, not kept beside this one.
  trace.disable();
  context.disable();
  propagation.disable();
  // Registers the W3C traceparent propagator and the AsyncLocalStorage context manager.
  next.register();
  // trace.disable() orphaned the proxy tracer taken before: take one of the new provider.
  tracer = trace.getTracer("railgate");
  provider = next;
  traceHealthProbes = healthProbes;
}

/** Start-up: installs the OTLP/HTTP exporter when configured; a no-op otherwise. */
export function configureTracing(config: TracingConfig): void {
  if (config.exporter !== "otlp") return;
  const url = config.endpoint ? `${config.endpoint.replace(/\/+$/, "")}/v1/traces` : undefined;
  const exporter = new ContainedExporter(new OTLPTraceExporter(url ? { url } : {}));
  install(exporter, config.serviceName, true, config.healthProbes);
}

/**
 * Flushes buffered spans and unregisters (shutdown, and the end of a test). Never throws and
 * never waits more than `SHUTDOWN_FLUSH_MS`: a collector that is down or slow costs the spans
 * still buffered (one warning), not the shutdown.
 */
export async function shutdownTracing(): Promise<void> {
  const current = provider;
  provider = undefined;
  traceHealthProbes = false;
  trace.disable();
  context.disable();
  propagation.disable();
  if (!current) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), SHUTDOWN_FLUSH_MS);
  });
  try {
    const outcome = await Promise.race([current.shutdown().then(() => "flushed" as const), late]);
    if (outcome === "late") {
      log.warn(
        { waitedMs: SHUTDOWN_FLUSH_MS },
        "trace flush on shutdown did not finish in time: the buffered spans are dropped",
      );
    }
  } catch (err) {
    log.warn(
      { reason: err instanceof Error ? err.message.slice(0, 200) : String(err).slice(0, 200) },
      "trace flush on shutdown failed: the buffered spans are dropped",
    );
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Test hook: every span goes to `exporter` (an InMemorySpanExporter) as soon as it ends.
 * Undo with shutdownTracing().
 */
export function installTestTracing(
  exporter: SpanExporter,
  options: { healthProbes: boolean } = { healthProbes: false },
): void {
  install(exporter, "railgate-test", false, options.healthProbes);
}

/** Marks a span failed with the error's message (never its stack: it may name internals). */
export function recordFailure(span: Span, err: unknown): void {
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: err instanceof Error ? err.message.slice(0, 256) : String(err).slice(0, 256),
  });
}

/** Runs `work` inside a child span of the active one; a no-op wrapper when tracing is off. */
export async function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: () => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  if (!provider) return work();
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work();
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  });
}

/** Starts a span (child of `parent`, default: the active context) the caller ends. */
export function startSpan(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  parent: Context = context.active(),
): Span {
  return tracer.startSpan(name, { kind, attributes }, parent);
}

/** Writes the W3C trace context of `ctx` (default: the active one) into `headers`. */
export function injectTraceHeaders(
  headers: Record<string, string>,
  ctx: Context = context.active(),
): void {
  if (provider) propagation.inject(ctx, headers);
}

/** Sets attributes on the active span (the request's service span), if one is recording. */
export function annotateActiveSpan(attributes: Attributes): void {
  if (provider) trace.getActiveSpan()?.setAttributes(attributes);
}

/** How many keys of a body's `trace` object become span attributes, and how long a value may be. */
export const TRACE_ATTRIBUTE_LIMITS = { keys: 32, chars: 256 };

/**
 * The speech body's `trace` object as `railgate.trace.<path>` attributes: nested objects
 * flattened with dots, arrays and other values as (cut) JSON, at most 32 keys of 256 characters,
 * so a client's trace never swells a span past what a collector accepts.
 */
export function traceBodyAttributes(traceObject: Record<string, unknown> | undefined): Attributes {
  const out: Attributes = {};
  if (!traceObject) return out;
  let n = 0;
  const cut = (s: string) => s.slice(0, TRACE_ATTRIBUTE_LIMITS.chars);
  const walk = (obj: Record<string, unknown>, prefix: string): void => {
    for (const [k, v] of Object.entries(obj)) {
      if (n >= TRACE_ATTRIBUTE_LIMITS.keys) return;
      const key = `${prefix}.${k}`;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        walk(v as Record<string, unknown>, key);
        continue;
      }
      n++;
      if (typeof v === "string") out[key] = cut(v);
      else if (typeof v === "number" || typeof v === "boolean") out[key] = v;
      else out[key] = cut(JSON.stringify(v));
    }
  };
  walk(traceObject, "railgate.trace");
  return out;
}

export { context, SpanKind, SpanStatusCode, trace };
