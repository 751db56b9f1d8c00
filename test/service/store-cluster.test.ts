import { RedisStore } from "../../store/redis-store.js";
import { startRedisCluster, type ThrowawayCluster } from "../kit/redis-cluster.js";
import { contract } from "./store-contract.js";

/**
 * The same store contract on a real three-node Redis Cluster: every script
 * and transaction touches one hash tag only, or this fails with CROSSSLOT.
 */
describe("Store contract on a Redis Cluster", () => {
  let cluster: ThrowawayCluster;
  let prefixes = 0;
  before(async function () {
    this.timeout(60_000);
    cluster = await startRedisCluster();
  });
  after(async () => {
    await cluster?.stop();
  });
  // A fresh key prefix per test stands in for FLUSHALL, which a cluster only does node by node.
  contract(
    "redis cluster",
    async (limits) => new RedisStore(cluster.client(), `rgc${prefixes}`, limits),
    async () => {
      prefixes++;
    },
  );
});
