import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { configureTracing, inSpan, shutdownTracing } from "../../platform/observability/tracing.js";

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe("tracing: OTLP/HTTP export", () => {
  let collector: Server;
  let endpoint = "";
  const received: Received[] = [];

  before(async () => {
    // A stand-in collector over real HTTP: records each export and answers as OTLP does.
    collector = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        received.push({
          path: req.url ?? "",
          headers: req.headers,
          body: Buffer.concat(parts).toString("utf8"),
        });
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => collector.listen(0, "127.0.0.1", r));
    endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/`;
  });
  after(async () => {
    await shutdownTracing();
    await new Promise((r) => collector.close(r));
  });

  it("sends the spans to <endpoint>/v1/traces with the service name, flushed at shutdown", async () => {
    configureTracing({
      exporter: "otlp",
      endpoint,
      serviceName: "railgate-export-test",
      healthProbes: false,
    });
    await inSpan("export-probe", { "railgate.probe": "yes" }, async () => {});
    await shutdownTracing();
    expect(received).to.have.length(1);
    const [sent] = received;
    expect(sent?.path).to.equal("/v1/traces");
    expect(sent?.body).to.include("export-probe");
    expect(sent?.body).to.include("railgate-export-test");
    expect(sent?.body).to.include("railgate.probe");
  });

  it("exports nothing when the exporter is none", async () => {
    received.length = 0;
    configureTracing({
      exporter: "none",
      endpoint,
      serviceName: "railgate-export-test",
      healthProbes: false,
    });
    await inSpan("not-exported", {}, async () => {});
    await shutdownTracing();
    expect(received).to.deep.equal([]);
  });
});
