import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { startSystemProcess } from "../kit/system-process.js";

/**
 * The kit's system process (the SIGTERM suites' subject) is reached on the ports the child
 * bound itself. It once took another system's gateway, answering /healthz on a port picked
 * for the child but taken first by a system of a suite running beside it, for the child:
 * the test's key, valid in its own Redis, was then refused with 401 "Invalid API key".
 */
describe("faults: the system process the kit starts", function () {
  this.timeout(120_000);
  let redis: ThrowawayRedis;
  let otherRedis: ThrowawayRedis;
  let inspector: RunningSystem;
  /** Another suite's system, on another Redis. */
  let other: RunningSystem;
  let secret: string;

  before(async () => {
    [redis, otherRedis] = await Promise.all([startRedis(), startRedis()]);
    inspector = await startTestSystem(redis.url);
    other = await startTestSystem(otherRedis.url);
    const admin = new Api(`http://127.0.0.1:${inspector.gatewayPorts.global}`, MANAGEMENT_KEY);
    const key = await admin.post("/api/v1/keys", { name: "system-process" });
    expectStatus(key, 201);
    secret = key.body.key;
  });

  after(async () => {
    await other?.close();
    await inspector?.close();
    await otherRedis?.stop();
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

  it("never takes another system answering on the child's port for the child", async () => {
    // The collision made certain: the child is told to listen where the other system does.
    const taken = String(other.gatewayPorts.global);
    let started: Awaited<ReturnType<typeof startSystemProcess>> | undefined;
    const failure = await startSystemProcess(redis.url, { GATEWAY_PORT: taken }).then(
      (s) => {
        started = s;
        return undefined;
      },
      (err: Error) => err,
    );
    await started?.child.stop(2_000);
    expect(started, "resolved with a system that is not the child").to.equal(undefined);
    expect(String(failure)).to.include("EADDRINUSE");
  });
});
