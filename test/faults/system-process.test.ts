import childProcess, { type SpawnOptions } from "node:child_process";
import { createServer } from "node:http";
import { syncBuiltinESMExports } from "node:module";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { type SystemProcess, startSystemProcess } from "../kit/system-process.js";

/**
 * The kit's system process (the SIGTERM suites' subject) is reached on the ports the child
 * bound itself. It once took another system's gateway, answering /healthz on a port picked
 * for the child but taken first by a system of a suite running beside it, for the child:
 * the test's key, valid in its own Redis, was then refused with 401 "Invalid API key".
 */
describe("faults: the system process the kit starts", function () {
  this.timeout(120_000);
  let redis: ThrowawayRedis;
  let inspector: RunningSystem;
  let secret: string;

  before(async () => {
    redis = await startRedis();
    inspector = await startTestSystem(redis.url);
    const admin = new Api(`http://127.0.0.1:${inspector.gatewayPorts.global}`, MANAGEMENT_KEY);
    const key = await admin.post("/api/v1/keys", { name: "system-process" });
    expectStatus(key, 201);
    secret = key.body.key;
  });

  after(async () => {
    await inspector?.close();
    await redis?.stop();
  });

  it("answers on the ports it reports, with the keys of its own Redis", async () => {
    const system = await startSystemProcess(redis.url);
    try {
      for (const region of ["global", "europe", "us"] as const) {
        const res = await new Api(system.baseUrl(region), secret).get("/api/v1/key");
        expectStatus(res, 200);
      }
    } finally {
      await system.child.stop(2_000);
    }
  });

  it("reads settings under their old names, with one start-up warning each naming the new", async () => {
    const system = await startSystemProcess(redis.url, {
      MAX_BODY_BYTES: "2048",
      SHUTDOWN_GRACE_MS: "5000",
      RAILGATE_SHUTDOWN_GRACE_MS: "1000",
    });
    try {
      const big = await new Api(system.baseUrl(), MANAGEMENT_KEY).post("/api/v1/keys", {
        name: "x".repeat(4096),
      });
      expectStatus(big, 413);
      const warnings = system.child
        .output()
        .split("\n")
        .filter((line) => line.includes("is deprecated"))
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(warnings).to.deep.equal([
        "environment variable MAX_BODY_BYTES is deprecated: rename it RAILGATE_MAX_BODY_BYTES",
        "environment variable SHUTDOWN_GRACE_MS is deprecated and ignored: RAILGATE_SHUTDOWN_GRACE_MS is set too and wins; unset SHUTDOWN_GRACE_MS",
      ]);
    } finally {
      await system.child.stop(2_000);
    }
  });

  it("is never taken for another server that got to a port first", async () => {
    // Whatever gateway port the kit hands the child, an impostor (another suite's gateway, as
    // far as a client can tell) binds it first, while the child is still loading. The kit
    // must not take it for the child: with ports of the child's own choosing there is none.
    const impostor = createServer((req, res) => {
      const healthz = req.url === "/healthz";
      res.writeHead(healthz ? 200 : 401, { "content-type": "application/json" });
      res.end(
        healthz
          ? JSON.stringify({ status: "ok", region: "global" })
          : JSON.stringify({ error: { code: 401, message: "Invalid API key" } }),
      );
    });
    const realSpawn = childProcess.spawn;
    childProcess.spawn = ((command: string, args: readonly string[], options: SpawnOptions) => {
      const port = Number(options.env?.RAILGATE_GATEWAY_PORT);
      if (port > 0 && !impostor.listening) impostor.listen(port, "127.0.0.1");
      return realSpawn(command, args, options);
    }) as unknown as typeof childProcess.spawn;
    // processes.ts imports `spawn` by name: refresh the builtin's ESM bindings.
    syncBuiltinESMExports();
    let system: SystemProcess | undefined;
    try {
      system = await startSystemProcess(redis.url);
      expectStatus(await new Api(system.baseUrl(), secret).get("/api/v1/key"), 200);
    } finally {
      childProcess.spawn = realSpawn;
      syncBuiltinESMExports();
      await system?.child.stop(2_000);
      impostor.close();
    }
  });
});
