import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import {
  Health,
  HealthCheckResponse_ServingStatus as Status,
} from "../../gen/grpc/health/v1/health_pb.js";
import { LIVENESS_SERVICE } from "../../platform/rpc/health.js";
import { type Child, makeTempDir, spawnChild } from "../kit/processes.js";

const app = (name: string) => fileURLToPath(new URL(`../../apps/${name}/main.js`, import.meta.url));

/**
 * Loaded before the app: on SIGUSR2 the process's event loop spins for good. A wedged process
 * (a runaway loop, a synchronous call that never returns) without any signal that stops it:
 * its sockets stay open and its kernel still accepts connections, but nothing answers.
 */
const WEDGE_ON_SIGUSR2 = `data:text/javascript,${encodeURIComponent(
  'process.on("SIGUSR2", () => { for (;;) {} });',
)}`;

/** grpc.health.v1 "liveness" of the process at `port`, as a Kubernetes grpc probe asks it. */
async function liveness(port: number): Promise<string> {
  const client = createClient(Health, createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }));
  try {
    const res = await client.check({ service: LIVENESS_SERVICE }, { timeoutMs: 2_000 });
    return Status[res.status];
  } catch (err) {
    return `failed: ${err instanceof Error ? err.message : String(err)}`;
  }
}

async function livez(url: string): Promise<string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return String(res.status);
  } catch (err) {
    return `failed: ${err instanceof Error ? err.name : String(err)}`;
  }
}

describe("faults: a wedged process fails its liveness check", function () {
  this.timeout(120_000);
  let speech: Child | undefined;

  after(async () => {
    // A wedged process cannot take its SIGTERM.
    speech?.process.kill("SIGKILL");
    await speech?.stop(2_000);
  });

  it("a speech process whose event loop spins answers neither gRPC health 'liveness' nor GET /livez, though it still runs", async () => {
    speech = spawnChild(process.execPath, ["--import", WEDGE_ON_SIGUSR2, app("speech")], {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      RAILGATE_STORE: "embedded",
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_GRPC_HOST: "127.0.0.1",
      RAILGATE_SPEECH_GRPC_PORT: "0",
      RAILGATE_METRICS_PORT: "0",
      RAILGATE_DATA_DIR: makeTempDir("rg-wedged-"),
      RAILGATE_LOG_LEVEL: "info",
    });
    const up = JSON.parse(await speech.waitForLine(/"msg":"speech service is up"/, 60_000)) as {
      grpcPort: number;
    };
    const metrics = JSON.parse(
      await speech.waitForLine(/"msg":"metrics listener is up"/, 60_000),
    ) as { metricsPort: number };
    const livezUrl = `http://127.0.0.1:${metrics.metricsPort}/livez`;
    expect(await liveness(up.grpcPort)).to.equal("SERVING");
    expect(await livez(livezUrl)).to.equal("200");

    speech.process.kill("SIGUSR2");
    expect(await liveness(up.grpcPort)).to.match(/^failed: /);
    expect(await livez(livezUrl)).to.match(/^failed: /);
    // Wedged, not gone: only a liveness probe's restart ends it.
    expect(speech.process.exitCode).to.equal(null);
    expect(speech.process.signalCode).to.equal(null);
  });
});
