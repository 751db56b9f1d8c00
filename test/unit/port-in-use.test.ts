import { createServer, type Server } from "node:net";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { StartupRefused } from "../../platform/config/config.js";
import { startMetricsServer } from "../../platform/observability/metrics-server.js";
import { startTestSystem } from "../kit/system.js";

/** A port this test holds, so whatever is started on it next finds it taken. */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return { server, port: (server.address() as { port: number }).port };
}

async function refusal(start: () => Promise<unknown>): Promise<Error> {
  try {
    const started = await start();
    await (started as RunningSystem | { close(): Promise<void> }).close();
  } catch (err) {
    return err as Error;
  }
  throw new Error("started on a port that was taken");
}

/** A taken port refuses the start naming the setting that chose it, not a bare EADDRINUSE. */
describe("a listener's port in use names the variable that sets it", () => {
  let held: { server: Server; port: number };

  beforeEach(async () => {
    held = await holdPort();
  });

  afterEach(async () => {
    await new Promise((resolve) => held.server.close(resolve));
  });

  for (const [variable, overrides] of [
    ["RAILGATE_GUARDRAIL_GRPC_PORT", (port: number) => ({ guardrailGrpcPort: port })],
    ["RAILGATE_SPEECH_GRPC_PORT", (port: number) => ({ speechGrpcPort: port })],
    [
      "RAILGATE_GATEWAY_EU_PORT",
      (port: number) => ({ gatewayPorts: { global: 0, europe: port, us: 0 } }),
    ],
  ] as const) {
    it(`${variable}`, async () => {
      const err = await refusal(() => startTestSystem(undefined, overrides(held.port)));
      expect(err).to.be.instanceOf(StartupRefused);
      expect(err.message).to.equal(
        `${variable}=${held.port}: port 127.0.0.1:${held.port} is in use: stop what holds it or choose another port`,
      );
    });
  }

  it("RAILGATE_METRICS_PORT", async () => {
    const err = await refusal(() => startMetricsServer(held.port, "127.0.0.1"));
    expect(err).to.be.instanceOf(StartupRefused);
    expect(err.message).to.match(
      new RegExp(
        `^RAILGATE_METRICS_PORT=${held.port}: port 127\\.0\\.0\\.1:${held.port} is in use`,
      ),
    );
  });
});
