import { MemoryStore } from "../../store/memory-store.js";
import { RedisStore } from "../../store/redis-store.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { contract } from "./store-contract.js";

describe("Store contract", () => {
  let redis: ThrowawayRedis;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  contract(
    "memory",
    async (limits) => new MemoryStore(limits),
    async () => {},
  );
  contract(
    "redis",
    async (limits) => new RedisStore(redis.client(), "rgtest", limits),
    async () => redis.flush(),
  );
});
