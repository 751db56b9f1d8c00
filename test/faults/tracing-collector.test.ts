import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { expectStatus } from "../kit/expect.js";
import { freePort } from "../kit/free-port.js";
import { Api } from "../kit/http.js";
import { pollUntil, sleep } from "../kit/poll.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SystemProcess, startSystemProcess } from "../kit/system-process.js";

/** The bound the issue sets on a shutdown with the collector down (the flush itself: 2 s). */
const SHUTDOWN_BOUND_MS = 5_000;

const EXPORT_FAILED = /OTLP trace export failed/;

/** Every line the child printed that is not one of its JSON log lines (a crash's stack is not). */
function strayLines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.trim() !== "")
    .filter((line) => {
      try {
        JSON.parse(line);
        return false;
      } catch {
        return true;
      }
    });
}

/** The JSON log lines at error level or above (pino: 50 error, 60 fatal). */
function errorLines(output: string): string[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
}

/** Sends SIGTERM; resolves with the exit code and how long the exit took. */
async function terminate(system: SystemProcess): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  system.child.process.kill("SIGTERM");
  const code = await system.exited;
  return { code, ms: Date.now() - started };
}

/** A span as OTLP/HTTP JSON carries it (only what the tests read). */
interface ExportedSpan {
  name: string;
  traceId: string;
}

/** A stand-in OTLP/HTTP collector: keeps every span POSTed to /v1/traces (JSON, as sent). */
class Receiver {
  readonly spans: ExportedSpan[] = [];
  private server?: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (c: Buffer) => parts.push(c));
      req.on("end", () => {
        if (req.url === "/v1/traces") this.keep(Buffer.concat(parts).toString("utf8"));
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((r) => this.server?.listen(0, "127.0.0.1", r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private keep(body: string): void {
    const { resourceSpans = [] } = JSON.parse(body) as {
      resourceSpans?: { scopeSpans?: { spans?: ExportedSpan[] }[] }[];
    };
    for (const r of resourceSpans)
      for (const s of r.scopeSpans ?? []) this.spans.push(...(s.spans ?? []));
  }

  inTrace(traceId: string): ExportedSpan[] {
    // OTLP/JSON spells trace ids in hex (the exporter's JSON mode).
    return this.spans.filter((s) => s.traceId.toLowerCase() === traceId);
  }

  async stop(): Promise<void> {
    await new Promise((r) => this.server?.close(r));
  }
}

const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;

/**
 * Tracing is telemetry: a collector that is down must cost neither a crash nor a late
 * shutdown, and health probes (every few seconds from each load balancer) send no spans
 * unless RAILGATE_TRACE_HEALTH_PROBES asks for them.
 */
describe("faults: tracing with the collector down, and health probes", function () {
  this.timeout(120_000);
  let redis: ThrowawayRedis;
  let system: SystemProcess | undefined;

  before(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await system?.child.stop(2_000);
    system = undefined;
  });
  after(async () => {
    await redis?.stop();
  });

  /** Traced requests (401: no key), so spans wait in the batch for the collector. */
  async function tracedRequests(s: SystemProcess, n: number): Promise<void> {
    for (let i = 0; i < n; i++) expectStatus(await new Api(s.baseUrl()).get("/api/v1/key"), 401);
  }

  it(`exits 0 within ${SHUTDOWN_BOUND_MS} ms of SIGTERM with the collector unreachable, no uncaught error`, async () => {
    // Nothing listens on this port (reserved by the OS, then closed): every export is refused.
    const closed = await freePort();
    system = await startSystemProcess(redis.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`,
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    await tracedRequests(system, 20);
    const { code, ms } = await terminate(system);
    const output = system.child.output();
    console.log(`      shutdown with the collector unreachable: ${ms} ms, exit code ${code}`);
    expect(strayLines(output), "output that is not a log line (an uncaught error)").to.deep.equal(
      [],
    );
    expect(errorLines(output)).to.deep.equal([]);
    expect(code).to.equal(0);
    expect(ms).to.be.lessThan(SHUTDOWN_BOUND_MS);
  });

  it("logs an unreachable collector once as a warning, however many exports fail", async () => {
    const closed = await freePort();
    system = await startSystemProcess(redis.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closed}`,
      // The SDK's own settings: a batch every 50 ms, given up on after 200 ms (no retry fits).
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_EXPORTER_OTLP_TIMEOUT: "200",
      RAILGATE_EMBEDDED_ENGINE: "off",
    });
    const s = system;
    // Batches fail one after the other: wait for the first warning, then fail many more.
    await pollUntil(
      async () => {
        await tracedRequests(s, 1);
        return s.child.output();
      },
      (out) => EXPORT_FAILED.test(out),
      200,
    );
    for (let i = 0; i < 10; i++) {
      await tracedRequests(s, 2);
      await sleep(100);
    }
    const { code } = await terminate(s);
    const output = s.child.output();
    const warnings = output.split("\n").filter((line) => EXPORT_FAILED.test(line));
    expect(warnings).to.have.length(1);
    expect(JSON.parse(warnings[0] as string)).to.include({ level: 40 });
    expect(strayLines(output)).to.deep.equal([]);
    expect(errorLines(output)).to.deep.equal([]);
    expect(code).to.equal(0);
  });

  it("sends no span for /healthz nor grpc.health.v1 Check; an ordinary request's goes", async () => {
    const receiver = new Receiver();
    const endpoint = await receiver.start();
    try {
      system = await startSystemProcess(redis.url, {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_BSP_SCHEDULE_DELAY: "50",
        // Over the gRPC hop: /healthz asks each service's grpc.health.v1 over the wire.
        RAILGATE_INTERNAL_TRANSPORT: "grpc",
        RAILGATE_EMBEDDED_ENGINE: "off",
      });
      const s = system;
      const probeTrace = "11111111111111111111111111111111";
      const requestTrace = "22222222222222222222222222222222";
      const probe = { traceparent: traceparent(probeTrace) };
      for (let i = 0; i < 5; i++) {
        const res = await new Api(s.baseUrl()).request("GET", "/healthz", undefined, {
          headers: probe,
        });
        expectStatus(res, 200);
      }
      // The guardrail process's gRPC port, from the child's start-up line.
      const grpcPort = Number(/"guardrailGrpc":(\d+)/.exec(s.child.output())?.[1]);
      expect(grpcPort).to.be.greaterThan(0);
      const health = createClient(
        Health,
        createGrpcTransport({ baseUrl: `http://127.0.0.1:${grpcPort}` }),
      );
      await health.check({ service: "" }, { headers: probe });
      // Spans leave in the order they end: once an ordinary request's has arrived, a probe's
      // (ended before it) would have arrived too.
      await sleep(200);
      const res = await new Api(s.baseUrl()).request("GET", "/api/v1/key", undefined, {
        headers: { traceparent: traceparent(requestTrace) },
      });
      expectStatus(res, 401);
      const traced = await pollUntil(
        async () => receiver.inTrace(requestTrace),
        (spans) => spans.length > 0,
        200,
      );
      expect(traced.map((sp) => sp.name)).to.include("GET /api/v1/key");
      expect(receiver.inTrace(probeTrace)).to.deep.equal([]);
      const probeNames = receiver.spans
        .map((sp) => sp.name)
        .filter((name) => /healthz|grpc\.health/.test(name));
      expect(probeNames).to.deep.equal([]);
    } finally {
      // The system first: its last flush needs the receiver.
      await system?.child.stop(2_000);
      system = undefined;
      await receiver.stop();
    }
  });
});
