import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter, type ReadableSpan } from "@opentelemetry/sdk-trace-node";
import { expect } from "chai";
import {
  installTestTracing,
  shutdownTracing,
  tracingEnabled,
} from "../../platform/observability/tracing.js";
import { sleep } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${CALLER_SPAN_ID}-01`;

describe("speech: OpenTelemetry traces", () => {
  const exporter = new InMemorySpanExporter();
  before(() => installTestTracing(exporter));
  after(() => shutdownTracing());
  const h = useSpeechSystem();
  beforeEach(() => exporter.reset());

  const inTrace = (traceId: string) =>
    exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  /**
   * The gateway's span ends when the response closes and the settlement's after the stream:
   * both may finish just after the client has read the body. Bounded polling, no time asserted.
   */
  async function spansOf(traceId: string, names: string[]): Promise<ReadableSpan[]> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const spans = inTrace(traceId);
      if (names.every((n) => spans.some((s) => s.name === n))) return spans;
      await sleep(10);
    }
    const seen = inTrace(traceId).map((s) => s.name);
    throw new Error(`trace ${traceId} lacks some of ${names.join(", ")}; has ${seen.join(", ")}`);
  }

  const one = (spans: ReadableSpan[], name: string) => {
    const found = spans.filter((s) => s.name === name);
    expect(found, name).to.have.length(1);
    return found[0] as ReadableSpan;
  };

  const GATEWAY = "POST /api/v1/audio/speech";
  const SERVICE = "railgate.speech.v1.SpeechService/Synthesize";
  const UPSTREAM = "text_to_speech tts-basic";

  it("continues the caller's traceparent through the gateway, the gRPC hop, Redis and the upstream", async () => {
    const res = await h.speak(
      {
        model: MODELS.basic,
        voice: "alloy",
        input: "Traced speech.",
        trace: {
          trace_name: "checkout",
          span: { step: 3, ok: true },
          tags: ["a", "b"],
          long: "x".repeat(1_000),
        },
      },
      { headers: { traceparent: TRACEPARENT } },
    );
    expectAudio(res);
    const spans = await spansOf(TRACE_ID, [
      GATEWAY,
      SERVICE,
      "railgate.admission",
      "railgate.settlement",
      UPSTREAM,
    ]);
    const gateway = one(spans, GATEWAY);
    expect(gateway.kind).to.equal(SpanKind.SERVER);
    expect(parentOf(gateway)).to.equal(CALLER_SPAN_ID);
    expect(gateway.attributes["http.route"]).to.equal("/api/v1/audio/speech");
    expect(gateway.attributes["http.response.status_code"]).to.equal(200);

    const service = one(spans, SERVICE);
    expect(service.kind).to.equal(SpanKind.SERVER);
    expect(parentOf(service)).to.equal(gateway.spanContext().spanId);
    expect(service.attributes).to.include({
      "gen_ai.operation.name": "text_to_speech",
      "gen_ai.request.model": MODELS.basic,
      "railgate.trace.trace_name": "checkout",
      "railgate.trace.span.step": 3,
      "railgate.trace.span.ok": true,
      "railgate.trace.tags": '["a","b"]',
    });
    expect(service.attributes["railgate.trace.long"]).to.equal("x".repeat(256));

    for (const name of ["railgate.admission", "railgate.settlement"]) {
      expect(parentOf(one(spans, name)), name).to.equal(service.spanContext().spanId);
    }

    const upstream = one(spans, UPSTREAM);
    expect(upstream.kind).to.equal(SpanKind.CLIENT);
    expect(parentOf(upstream)).to.equal(service.spanContext().spanId);
    expect(upstream.attributes).to.include({
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(h.fakes.acme.baseUrl).port),
      "gen_ai.provider.name": "acme",
      "gen_ai.request.model": "tts-basic",
      "http.response.status_code": 200,
    });

    // The provider got the upstream span's context, in the caller's trace.
    const sent = h.fakes.acme.requests[0]?.headers.traceparent;
    expect(sent).to.equal(`00-${TRACE_ID}-${upstream.spanContext().spanId}-01`);
  });

  it("starts a trace when the caller sends none, and the service span joins it", async () => {
    const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: "Fresh trace." });
    expectAudio(res);
    const sent = String(h.fakes.acme.requests[0]?.headers.traceparent);
    const traceId = sent.split("-")[1] ?? "";
    expect(traceId).to.match(/^[0-9a-f]{32}$/);
    const spans = await spansOf(traceId, [GATEWAY, SERVICE]);
    const gateway = one(spans, GATEWAY);
    expect(parentOf(gateway)).to.equal(undefined);
    expect(parentOf(one(spans, SERVICE))).to.equal(gateway.spanContext().spanId);
  });

  it("marks the upstream span failed when the provider answers an error", async () => {
    const res = await h.speak(
      { model: MODELS.broken, voice: "alloy", input: "Broken upstream." },
      { headers: { traceparent: TRACEPARENT } },
    );
    expect(res.status).to.be.greaterThanOrEqual(500);
    const spans = await spansOf(TRACE_ID, [GATEWAY, "text_to_speech broken"]);
    const upstream = one(spans, "text_to_speech broken");
    expect(upstream.status.code).to.equal(2); // SpanStatusCode.ERROR
    expect(upstream.attributes["http.response.status_code"]).to.equal(500);
  });

  // Mocha runs a suite's own tests before its child suites: this one runs last.
  describe("when tracing is off (the default)", () => {
    before(() => shutdownTracing());

    it("sends no traceparent upstream, and the API hands out its no-op tracer", async () => {
      const res = await h.speak(
        { model: MODELS.basic, voice: "alloy", input: "Untraced.", trace: { trace_name: "n" } },
        { headers: { traceparent: TRACEPARENT } },
      );
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.headers).not.to.have.property("traceparent");
      expect(tracingEnabled()).to.equal(false);
      expect(trace.getTracer("railgate").startSpan("probe").isRecording()).to.equal(false);
    });
  });
});
