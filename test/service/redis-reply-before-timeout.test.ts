import { expect } from "chai";
import { Redis } from "ioredis";
import { createRedisClient } from "../../store/open-store.js";
import { isStoreUnavailable } from "../../store/store-availability.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

const TIMEOUT_MS = 200;

/** Holds the event loop (a long GC, a big embedded-database batch, a saturated host). */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: nothing else in this process runs meanwhile
  }
}

/** A command sent, then a stall past the time-out before the loop can read the reply. */
async function getThroughStall(client: Redis | ReturnType<typeof createRedisClient>) {
  const reply = client.get("railgate:absent").then(
    (value) => ({ ok: true as const, value }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  stall(TIMEOUT_MS * 2);
  return reply;
}

describe("store: a Redis reply that arrived during an event-loop stall beats the command time-out", () => {
  let redis: ThrowawayRedis;

  before(async () => {
    redis = await startRedis();
  });

  after(async () => {
    redis?.thaw();
    await redis?.stop();
  });

  it("plain ioredis fails such a command as timed out (what the store's client fixes)", async () => {
    // The same options the store's clients have, without the fix: shows the stall below is
    // one that loses the reply, so the next test's success is the fix's.
    const plain = new Redis(redis.url, { commandTimeout: TIMEOUT_MS, lazyConnect: true });
    await plain.connect();
    try {
      const outcome = await getThroughStall(plain);
      expect(outcome.ok).to.equal(false);
      expect(String(outcome.ok ? "" : outcome.err)).to.match(/Command timed out/);
    } finally {
      plain.disconnect();
    }
  });

  it("the store's client answers it with Redis's reply", async () => {
    const client = createRedisClient({ redisUrl: redis.url, redisCommandTimeoutMs: TIMEOUT_MS });
    await client.connect();
    try {
      await client.set("railgate:present", "yes");
      const outcome = await getThroughStall(client);
      expect(outcome).to.deep.equal({ ok: true, value: null });
      const read = client.get("railgate:present");
      stall(TIMEOUT_MS * 2);
      expect(await read).to.equal("yes");
    } finally {
      client.disconnect();
    }
  });

  it("a Redis that does not answer still fails the command after the time-out, as the store being away", async () => {
    const client = createRedisClient({ redisUrl: redis.url, redisCommandTimeoutMs: TIMEOUT_MS });
    await client.connect();
    redis.freeze();
    try {
      const err = await client.get("railgate:absent").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).to.match(/Command timed out/);
      expect(isStoreUnavailable(err)).to.equal(true);
    } finally {
      redis.thaw();
      client.disconnect();
    }
  });

  it("other failures pass unchanged: a Redis error reply stays a ReplyError, not a store outage", async () => {
    const client = createRedisClient({ redisUrl: redis.url, redisCommandTimeoutMs: TIMEOUT_MS });
    await client.connect();
    try {
      const err = await client.call("NOSUCHCOMMAND").then(
        () => undefined,
        (e: unknown) => e,
      );
      expect((err as Error).name).to.equal("ReplyError");
      expect(isStoreUnavailable(err)).to.equal(false);
    } finally {
      client.disconnect();
    }
  });
});
