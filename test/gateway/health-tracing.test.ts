import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-node";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { loadConfig } from "../../platform/config/config.js";
import { installTestTracing, shutdownTracing } from "../../platform/observability/tracing.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { pollUntil, sleep } from "../kit/poll.js";
import { startTestSystem } from "../kit/system.js";

/**
 * Health probes get no span unless RAILGATE_TRACE_HEALTH_PROBES: neither the gateway's /healthz nor the
 * grpc.health.v1 checks it makes (over the gRPC hop with RAILGATE_TEST_TRANSPORT=grpc).
 */
describe("gateway: health probes and traces", () => {
  // A new one per test: shutdownTracing() shuts the exporter too, which then keeps nothing.
  let exporter: InMemorySpanExporter;
  let redis: LaneStore;
  let system: RunningSystem;
  let api: Api;

  before(async () => {
    redis = await startLaneStore();
    system = await startTestSystem(redis.url);
    api = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`);
  });
  afterEach(() => shutdownTracing());
  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  const names = () => exporter.getFinishedSpans().map((s) => s.name);
  /** An ordinary request, then its span: every span ended before it has been exported too. */
  async function afterAnOrdinaryRequest(): Promise<string[]> {
    expectStatus(await api.get("/api/v1/key"), 401);
    return pollUntil(
      async () => names(),
      (n) => n.includes("GET /api/v1/key"),
    );
  }

  it("records no span for /healthz by default (RAILGATE_TRACE_HEALTH_PROBES=false)", async () => {
    expect(loadConfig({}).tracing.healthProbes).to.equal(false);
    exporter = new InMemorySpanExporter();
    installTestTracing(exporter, { healthProbes: false });
    for (let i = 0; i < 3; i++) expectStatus(await api.get("/healthz"), 200);
    await sleep(50);
    const spans = await afterAnOrdinaryRequest();
    expect(spans.filter((n) => /healthz|grpc\.health/.test(n))).to.deep.equal([]);
  });

  it("traces them with RAILGATE_TRACE_HEALTH_PROBES=true", async () => {
    expect(loadConfig({ RAILGATE_TRACE_HEALTH_PROBES: "true" }).tracing.healthProbes).to.equal(
      true,
    );
    exporter = new InMemorySpanExporter();
    installTestTracing(exporter, { healthProbes: true });
    expectStatus(await api.get("/healthz"), 200);
    const spans = await pollUntil(
      async () => names(),
      (n) => n.includes("GET /healthz"),
    );
    // The gateway's span and the checks it made (the same interceptors in process as over gRPC).
    expect(spans).to.include("GET /healthz");
    expect(spans).to.include("grpc.health.v1.Health/Check");
  });
});
