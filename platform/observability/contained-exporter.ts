import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-node";
import { componentLogger } from "./logger.js";

/** What an exporter reports per batch (@opentelemetry/core's ExportResult, not a dependency of ours). */
type ExportResult = Parameters<Parameters<SpanExporter["export"]>[1]>[0];

const log = componentLogger("tracing");

/** ExportResultCode.SUCCESS (its value: @opentelemetry/core is not a dependency of ours). */
const SUCCESS = 0;

/**
 * Wraps the OTLP exporter so an unreachable collector costs one warning, not a flood and never a
 * crash: the first failed export of an outage is logged as a warning (without a stack: the
 * cause is the collector, not this process), the next ones are counted and dropped quietly, and
 * the recovery is logged with how many batches were lost. Spans are telemetry: losing them must
 * never stop a request, nor a shutdown.
 */
export class ContainedExporter implements SpanExporter {
  private failing = false;
  private lostBatches = 0;

  constructor(private readonly inner: SpanExporter) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      this.inner.export(spans, (result) => {
        this.note(result);
        done(result);
      });
    } catch (err) {
      const result = { code: 1, error: err instanceof Error ? err : new Error(String(err)) };
      this.note(result);
      done(result);
    }
  }

  private note(result: ExportResult): void {
    if (result.code === SUCCESS) {
      if (this.failing) {
        log.info({ lostBatches: this.lostBatches }, "OTLP trace export works again");
      }
      this.failing = false;
      this.lostBatches = 0;
      return;
    }
    this.lostBatches++;
    if (this.failing) return;
    this.failing = true;
    log.warn(
      { reason: result.error?.message?.slice(0, 200) ?? "unknown" },
      "OTLP trace export failed: spans are dropped until the collector answers (logged once per outage)",
    );
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}
