import { expect } from "chai";
import { startGuardrailServer } from "../../apps/control-plane/server.js";
import { createServiceClients, grpcTransports } from "../../gateway/clients.js";
import { RedisStore } from "../../store/redis-store.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const INTERNAL_TOKEN = "internal-token-for-drain-tests-0123456789";

/**
 * A guardrail replica that drains ends the gateways' invalidation streams at once (status OK),
 * so each gateway follows another replica straight away, and the drain does not wait out its
 * grace period for streams that never end by themselves (a rolling restart would otherwise
 * take RAILGATE_SHUTDOWN_GRACE_MS per guardrail pod and cut the streams at the end).
 */
describe("guardrail service: drain ends the invalidation streams", function () {
  this.timeout(30_000);
  let redis: ThrowawayRedis;

  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  it("ends each WatchInvalidations stream cleanly and closes well within a long grace", async () => {
    const store = new RedisStore(redis.client(), "rg");
    const server = await startGuardrailServer(store, 0, "127.0.0.1", {
      managementKey: MANAGEMENT_KEY,
      internalToken: INTERNAL_TOKEN,
    });
    const clients = createServiceClients(
      grpcTransports(
        {
          guardrail: `http://127.0.0.1:${server.port}`,
          speech: `http://127.0.0.1:${server.port}`,
        },
        { internalToken: INTERNAL_TOKEN },
      ),
    );
    try {
      // Two streams, each open once its first message ("*", sent on subscription) is in.
      const streams = [
        clients.accounts.watchInvalidations({})[Symbol.asyncIterator](),
        clients.accounts.watchInvalidations({})[Symbol.asyncIterator](),
      ];
      for (const stream of streams) {
        expect((await stream.next()).value?.scope).to.equal("*");
      }
      // 60 s of grace, past this test's time-out: only streams that end let close() return.
      const closed = server.close({ graceMs: 60_000 });
      for (const stream of streams) {
        // Ends cleanly (an error would throw here), after whatever scopes were still queued.
        while (!(await stream.next()).done) {}
      }
      await closed;
    } finally {
      await store.close();
    }
  });
});
