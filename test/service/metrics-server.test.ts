import { expect } from "chai";
import { grpcServerCalls } from "../../platform/observability/metrics.js";
import {
  type MetricsServer,
  startMetricsServer,
} from "../../platform/observability/metrics-server.js";

describe("RAILGATE_METRICS_PORT: a process's own /metrics listener", () => {
  let server: MetricsServer;
  let base: string;
  before(async () => {
    server = await startMetricsServer(0, "127.0.0.1");
    base = `http://127.0.0.1:${server.port}`;
  });
  after(() => server.close());

  it("serves this process's registry as Prometheus text, without a key", async () => {
    const labels = { service: "test.Metrics", method: "Probe", code: "OK" };
    grpcServerCalls.labels(labels).inc(3);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.match(/^text\/plain; version=0\.0\.4/);
    expect(await res.text()).to.include(
      'railgate_grpc_server_calls_total{service="test.Metrics",method="Probe",code="OK"} 3',
    );
  });

  it("answers GET /livez with 200 from the event loop (a liveness probe's answer)", async () => {
    const res = await fetch(`${base}/livez`);
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal({ status: "ok" });
  });

  it("answers 404 for any other path and 405 for another method, in the error shape", async () => {
    const other = await fetch(`${base}/api/v1/keys`);
    expect(other.status).to.equal(404);
    expect(await other.json()).to.deep.equal({
      error: { code: 404, message: "Only /metrics and /livez are served on the metrics port" },
    });
    const post = await fetch(`${base}/metrics`, { method: "POST" });
    expect(post.status).to.equal(405);
    expect(post.headers.get("allow")).to.equal("GET, HEAD");
    expect(((await post.json()) as { error: { message: string } }).error.message).to.equal(
      "Method POST not allowed; use GET",
    );
  });
});
