import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { freePort } from "../kit/free-port.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { startTestSystem } from "../kit/system.js";

const PROBE = fileURLToPath(new URL("../../apps/cli/grpc-health.js", import.meta.url));

function probe(which: string, port: number): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [PROBE, which, `http://127.0.0.1:${port}`],
      { env: { PATH: process.env.PATH } },
      (err, _stdout, stderr) =>
        resolve({ code: err ? Number(err.code) : 0, stderr: String(stderr) }),
    );
  });
}

/** The docker-compose health check (apps/cli/grpc-health.ts): grpc.health.v1 Check of each service. */
describe("container health probe (grpc.health.v1 over real gRPC)", function () {
  this.timeout(60_000);
  let redis: ThrowawayRedis;
  let system: RunningSystem;

  before(async () => {
    redis = await startRedis();
    system = await startTestSystem(redis.url);
  });

  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  it("exits 0 for each serving service, without credentials", async () => {
    expect(await probe("guardrail", system.guardrailGrpcPort)).to.deep.equal({
      code: 0,
      stderr: "",
    });
    expect(await probe("speech", system.speechGrpcPort)).to.deep.equal({ code: 0, stderr: "" });
  });

  it("exits 1 naming the problem when nothing answers", async () => {
    const run = await probe("speech", await freePort());
    expect(run.code).to.equal(1);
    expect(run.stderr).to.match(/^unhealthy: /);
  });

  it("exits 1 when a service's store is down (NOT_SERVING)", async () => {
    await redis.stop();
    const run = await probe("guardrail", system.guardrailGrpcPort);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.equal("unhealthy: guardrail is NOT_SERVING\n");
  });
});
