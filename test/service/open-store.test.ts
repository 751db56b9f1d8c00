import { expect } from "chai";
import { loadConfig } from "../../platform/config.js";
import { openStore } from "../../store/open-store.js";
import { freePort } from "../kit/free-port.js";
import { startRedis } from "../kit/redis-server.js";

describe("openStore", () => {
  it("falls back to the embedded store when no Redis answers at the default address", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const store = await openStore({ ...loadConfig({}), redisUrl: undefined }, nobody);
    try {
      expect(store.kind).to.equal("memory");
    } finally {
      await store.close();
    }
  });

  it("refuses to start when an explicitly configured Redis is unreachable", async () => {
    const nobody = `redis://127.0.0.1:${await freePort()}`;
    const failed = await openStore({ ...loadConfig({}), redisUrl: nobody }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(failed).to.be.instanceOf(Error);
    expect((failed as Error).message).to.match(/not reachable/);
  });

  it("uses Redis when it answers", async () => {
    const redis = await startRedis();
    try {
      const store = await openStore({ ...loadConfig({}), redisUrl: redis.url });
      expect(store.kind).to.equal("redis");
      await store.close();
    } finally {
      await redis.stop();
    }
  });
});
