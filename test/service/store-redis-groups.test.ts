import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import type { Redis } from "ioredis";
import { defaultGuardrailId, newId } from "../../domain/ids.js";
import { WorkspaceSchema } from "../../gen/railgate/account/v1/account_pb.js";
import { nowTimestamp } from "../../platform/time.js";
import type { Admission, Settlement } from "../../store/admission.js";
import { createRedisClient } from "../../store/open-store.js";
import { RedisKeys } from "../../store/redis-keys.js";
import { RedisStore } from "../../store/redis-store.js";
import { isStoreUnavailable } from "../../store/store-availability.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

const KEY = "g".repeat(64);
const DAY = Math.floor(Date.now() / 86_400_000);

function admission(scope: string, overrides: Partial<Admission> = {}): Admission {
  return {
    id: newId(),
    scope,
    keyHash: KEY,
    creditMicros: 100,
    keyMicros: 100,
    budgets: [
      {
        guardrailId: "g1",
        entity: `key:${KEY}`,
        firstDay: DAY,
        day: DAY,
        limitMicros: 1_000_000,
        amountMicros: 100,
      },
    ],
    ...overrides,
  };
}

/** Each request cost 60 of its 100 reserved. */
function actual(a: Admission): Settlement {
  return {
    creditMicros: 60,
    keyMicros: 60,
    budgets: a.budgets.map((b) => ({ ...b, amountMicros: 60 })),
  };
}

/** Scripts Redis ran since the last CONFIG RESETSTAT. */
async function scriptCalls(raw: Redis): Promise<number> {
  const info = await raw.info("commandstats");
  const calls = (cmd: string) =>
    Number(new RegExp(`^cmdstat_${cmd}:calls=(\\d+)`, "m").exec(info)?.[1] ?? 0);
  return calls("evalsha") + calls("eval");
}

/**
 * Admissions and settlements that arrive together are one script each
 * (store/group-commit.ts), which must change nothing of what each request
 * would get alone: counted on a throwaway Redis, through real scripts.
 */
describe("Redis store: grouped admissions and settlements", () => {
  let redis: ThrowawayRedis;
  let raw: Redis;
  const k = new RedisKeys("rg");

  async function workspace(store: RedisStore, credits: number): Promise<string> {
    const id = newId();
    await store.createWorkspace(
      create(WorkspaceSchema, {
        id,
        name: id,
        slug: id,
        defaultGuardrailId: defaultGuardrailId(id),
        createdAt: nowTimestamp(),
      }),
    );
    await store.addCredits(id, credits);
    return id;
  }

  async function openStore(commandTimeoutMs = 1000): Promise<RedisStore> {
    const client = createRedisClient({
      redisUrl: redis.url,
      redisClusterNodes: undefined,
      redisCommandTimeoutMs: commandTimeoutMs,
    });
    client.on("error", () => {});
    await client.connect();
    return new RedisStore(client, "rg");
  }

  before(async () => {
    redis = await startRedis();
    raw = redis.client();
  });
  after(async () => {
    raw?.disconnect();
    await redis?.stop();
  });

  it("admits and settles 40 concurrent requests of a workspace in one script each", async () => {
    const store = await openStore();
    try {
      const ws = await workspace(store, 1_000_000);
      // The scripts are loaded (a first EVALSHA would fail NOSCRIPT and be sent again as EVAL).
      const first = admission(ws);
      expect(await store.admit(first)).to.deep.include({ ok: true });
      await store.settle(first, actual(first), true);
      await raw.config("RESETSTAT");

      const many = Array.from({ length: 40 }, () => admission(ws));
      const results = await Promise.all(many.map((a) => store.admit(a)));
      expect(results.every((r) => r.ok)).to.equal(true);
      expect(await scriptCalls(raw)).to.equal(1);
      await Promise.all(many.map((a) => store.settle(a, actual(a), true)));
      expect(await scriptCalls(raw)).to.equal(2);

      // Each request was reserved and settled exactly as alone: 41 requests at 60 each.
      expect(await store.getCredits(ws)).to.equal(1_000_000 - 41 * 60);
      expect(Number(await raw.get(k.keySpend(ws, KEY)))).to.equal(41 * 60);
      expect(Number(await raw.hget(k.budgetSpend(ws, "g1", `key:${KEY}`), String(DAY)))).to.equal(
        41 * 60,
      );
    } finally {
      await store.close();
    }
  });

  it("admits a concurrent burst from two stores exactly up to each limit, in groups", async () => {
    const [a, b] = [await openStore(), await openStore()];
    try {
      const ws = await workspace(a, 100 * 23);
      const now = Date.now();
      // Rate limit 37 a minute, credits for 23 requests, a key limit worth 31, a budget worth 29.
      const rated = (ov: Partial<Admission>) =>
        admission(ws, {
          rate: { limit: 37, windowMs: 60_000, nowMs: now },
          keyLimitMicros: 31 * 100,
          ...ov,
        });
      const budget = (limitMicros: number) => [
        {
          guardrailId: "g-burst",
          entity: "member:u1",
          firstDay: DAY,
          day: DAY,
          limitMicros,
          amountMicros: 100,
        },
      ];
      const burst = async (make: () => Admission) => {
        const all = Array.from({ length: 60 }, (_, i) => ({ store: i % 2 ? a : b, a: make() }));
        const results = await Promise.all(all.map((x) => x.store.admit(x.a)));
        return results.filter((r) => r.ok).length;
      };
      // Credits bind first (23 of the budget's 29, the key limit's 31, the rate's 37) ...
      expect(await burst(() => rated({ budgets: budget(29 * 100) }))).to.equal(23);
      // ... then, in an unmetered workspace, the budget, the key limit, the rate limit in turn.
      const free = await workspace(a, 0);
      await raw.del(k.credits(free));
      const inFree = (ov: Partial<Admission>) => ({ ...rated(ov), scope: free });
      expect(await burst(() => inFree({ budgets: budget(29 * 100) }))).to.equal(29);
      expect(
        await burst(() =>
          inFree({ keyLimitMicros: 31 * 100, budgets: [], keyHash: "h".repeat(64) }),
        ),
      ).to.equal(31);
      expect(
        await burst(() =>
          inFree({ creditMicros: 0, keyMicros: 0, budgets: [], keyHash: "r".repeat(64) }),
        ),
      ).to.equal(37);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("applies a retried group once: a group whose answer was lost moves nothing again", async () => {
    const store = await openStore(200);
    try {
      const ws = await workspace(store, 1_000_000);
      const many = Array.from({ length: 10 }, () => admission(ws));
      await Promise.all(many.map((a) => store.admit(a)));
      // Frozen: the group times out, but Redis runs it when it wakes up.
      redis.freeze();
      const failed = await Promise.allSettled(many.map((a) => store.settle(a, actual(a), true)));
      redis.thaw();
      expect(failed.every((r) => r.status === "rejected" && isStoreUnavailable(r.reason))).to.equal(
        true,
      );
      // The retry (as the speech service's retry queue sends it) finds every marker set.
      await Promise.all(many.map((a) => store.settle(a, actual(a), true)));
      // And once more, one request at a time, as a queue of kept writes retries them.
      for (const a of many) await store.settle(a, actual(a), true);
      expect(await store.getCredits(ws)).to.equal(1_000_000 - 10 * 60);
      expect(Number(await raw.get(k.keySpend(ws, KEY)))).to.equal(10 * 60);
    } finally {
      await store.close();
    }
  });

  it("sends at most 64 requests per script", async () => {
    const store = await openStore();
    try {
      const ws = await workspace(store, 1_000_000);
      const first = admission(ws);
      await store.admit(first);
      await raw.config("RESETSTAT");
      const many = Array.from({ length: 100 }, () => admission(ws));
      const results = await Promise.all(many.map((a) => store.admit(a)));
      expect(results.filter((r) => r.ok)).to.have.length(100);
      expect(await scriptCalls(raw)).to.equal(2);
    } finally {
      await store.close();
    }
  });

  it("fails the calls waiting behind a group that found Redis frozen at once, never sending them", async () => {
    const store = await openStore(200);
    try {
      const ws = await workspace(store, 1_000_000);
      const first = admission(ws);
      await store.admit(first);
      await raw.config("RESETSTAT");
      redis.freeze();
      const inFlight = store.admit(admission(ws));
      // Made once the first group is on its way: they wait behind it.
      await new Promise((r) => setImmediate(r));
      const behind = Array.from({ length: 5 }, () => store.admit(admission(ws)));
      const outcomes = await Promise.allSettled([inFlight, ...behind]);
      redis.thaw();
      expect(
        outcomes.every((o) => o.status === "rejected" && isStoreUnavailable(o.reason)),
      ).to.equal(true);
      // Only the group that was sent ran (when Redis woke up): one request reserved.
      expect(await scriptCalls(raw)).to.equal(1);
      expect(await store.getCredits(ws)).to.equal(1_000_000 - 2 * 100);
    } finally {
      await store.close();
    }
  });

  it("fails only the request that meets an error of its own inside a group", async () => {
    const store = await openStore();
    try {
      const ws = await workspace(store, 1_000_000);
      const now = Date.now();
      const keys = ["1", "2", "3", "4"].map((c) => c.repeat(64));
      const [broken = "", ...fine] = keys;
      const make = (keyHash: string) =>
        admission(ws, { keyHash, budgets: [], rate: { limit: 100, windowMs: 60_000, nowMs: now } });
      // A rate counter of the wrong type: its key's admission cannot read it.
      const rateKey = k.rate(ws, broken, Math.floor(now / 60_000));
      await raw.hset(rateKey, "x", "1");
      const outcomes = await Promise.allSettled(keys.map((h) => store.admit(make(h))));
      expect(outcomes[0]?.status).to.equal("rejected");
      expect(String((outcomes[0] as PromiseRejectedResult).reason)).to.match(/WRONGTYPE/);
      expect(outcomes.slice(1).map((o) => o.status === "fulfilled" && o.value.ok)).to.deep.equal([
        true,
        true,
        true,
      ]);
      await raw.del(rateKey);

      // The same for a settlement: a key spend counter of the wrong type.
      const admitted = keys.map(make);
      await Promise.all(admitted.map((a) => store.admit(a)));
      await raw.del(k.keySpend(ws, broken));
      await raw.hset(k.keySpend(ws, broken), "x", "1");
      const settled = await Promise.allSettled(
        admitted.map((a) => store.settle(a, actual(a), true)),
      );
      expect(settled.map((o) => o.status)).to.deep.equal([
        "rejected",
        "fulfilled",
        "fulfilled",
        "fulfilled",
      ]);
      for (const h of fine) expect(Number(await raw.get(k.keySpend(ws, h)))).to.equal(100 + 60);
    } finally {
      await store.close();
    }
  });

  it("closes only after every grouped settlement reached Redis", async () => {
    const store = await openStore();
    const ws = await workspace(store, 1_000_000);
    const many = Array.from({ length: 25 }, () => admission(ws));
    await Promise.all(many.map((a) => store.admit(a)));
    // Not awaited: the group is still waiting for the end of this turn when close() is called.
    const settled = Promise.all(many.map((a) => store.settle(a, actual(a), true)));
    await store.close();
    await settled;
    expect(Number(await raw.get(k.credits(ws)))).to.equal(1_000_000 - 25 * 60);
  });
});
