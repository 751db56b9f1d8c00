import { expect } from "chai";
import type { Cluster, Redis } from "ioredis";
import { MemoryAudioClips } from "../../store/audio-clips/memory-audio-clips.js";
import { RedisAudioClips } from "../../store/audio-clips/redis-audio-clips.js";
import type { AudioClipStore } from "../../store/audio-clips/types.js";
import { createRedisClient } from "../../store/open-store.js";
import { sleep } from "../kit/poll.js";
import { startRedisCluster, type ThrowawayCluster } from "../kit/redis-cluster.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";

const DAY_MS = 86_400_000;
const clip = (bytes: number, fill = 1) => [Buffer.alloc(bytes, fill)];
const limits = (budgetBytes: number, ttlMs = DAY_MS) => ({ budgetBytes, ttlMs });

/** The contract both clip stores keep (store/audio-clips/types.ts). */
function contract(name: string, open: () => AudioClipStore) {
  describe(`audio clips: ${name}`, () => {
    let clips: AudioClipStore;
    let n = 0;
    let scope: string;
    beforeEach(() => {
      clips = open();
      scope = `ws-${name}-${++n}`;
    });

    it("reads back what it stored, chunk for chunk, and counts the hit", async () => {
      const chunks = [Buffer.from("abc"), Buffer.from("defg")];
      expect(await clips.put(scope, "h", '{"m":1}', chunks, limits(100))).to.deep.equal({
        outcome: "stored",
        evicted: 0,
      });
      const got = await clips.get(scope, "h");
      expect(got?.meta).to.equal('{"m":1}');
      expect(Buffer.concat(got?.chunks ?? []).toString()).to.equal("abcdefg");
      const usage = await clips.usage(scope);
      expect(usage).to.include({ clips: 1, bytes: 7, hits: 1, misses: 0, collapsed: 0 });
    });

    it("keeps workspaces apart", async () => {
      await clips.put(scope, "h", "m", clip(10), limits(100));
      expect(await clips.get(`${scope}-other`, "h")).to.equal(undefined);
      expect((await clips.usage(`${scope}-other`)).bytes).to.equal(0);
    });

    it("refuses a clip larger than the budget, and stores an identical one once", async () => {
      expect(await clips.put(scope, "big", "m", clip(101), limits(100))).to.deep.equal({
        outcome: "too-large",
      });
      await clips.put(scope, "h", "m", clip(10), limits(100));
      expect(await clips.put(scope, "h", "m", clip(10), limits(100))).to.deep.equal({
        outcome: "exists",
      });
      expect(await clips.usage(scope)).to.include({ clips: 1, bytes: 10 });
    });

    it("evicts the least recently used clips of the workspace to fit the budget", async () => {
      await clips.put(scope, "a", "m", clip(40), limits(100));
      await clips.put(scope, "b", "m", clip(40), limits(100));
      await clips.get(scope, "a");
      expect(await clips.put(scope, "c", "m", clip(40), limits(100))).to.deep.equal({
        outcome: "stored",
        evicted: 1,
      });
      expect(await clips.get(scope, "b")).to.equal(undefined);
      expect(await clips.get(scope, "a")).to.not.equal(undefined);
      expect(await clips.usage(scope)).to.include({ clips: 2, bytes: 80 });
    });

    it("forgets an expired clip and gives its bytes back", async () => {
      await clips.put(scope, "h", "m", clip(30), limits(100, 20));
      // Polled (no time asserted): gone once its TTL has passed.
      for (let i = 0; i < 200 && (await clips.get(scope, "h")) !== undefined; i++) await sleep(10);
      expect(await clips.get(scope, "h")).to.equal(undefined);
      expect((await clips.usage(scope)).bytes).to.equal(0);
      expect((await clips.put(scope, "h", "m", clip(30), limits(100))).outcome).to.equal("stored");
    });

    it("counts misses and collapsed requests as the cache reports them", async () => {
      await clips.count(scope, "misses", DAY_MS);
      await clips.count(scope, "collapsed", DAY_MS);
      await clips.count(scope, "collapsed", DAY_MS);
      expect(await clips.usage(scope)).to.include({ hits: 0, misses: 1, collapsed: 2 });
    });
  });
}

contract("memory", () => new MemoryAudioClips(1_000_000));

let redis: ThrowawayRedis | undefined;
let client: Redis | Cluster | undefined;
before(async function () {
  this.timeout(30_000);
  redis = await startRedis();
  client = createRedisClient({ redisUrl: redis.url });
  await client.connect();
});
after(async () => {
  client?.disconnect();
  await redis?.stop();
});
contract("redis", () => new RedisAudioClips(client as Redis, "rg-test"));

describe("audio clips: Redis keys", () => {
  it("lives under the store's prefix and the workspace's hash tag, and nothing outlives its clips", async () => {
    const clips = new RedisAudioClips(client as Redis, "rg-keys");
    await clips.put("w1", "h", "m", clip(10), limits(100, 50));
    await clips.count("w1", "misses", 50);
    const keys = await (client as Redis).keys("rg-keys:*");
    expect(keys.length).to.be.above(0);
    for (const k of keys) expect(k.startsWith("rg-keys:{w:w1}:ac:"), k).to.equal(true);
    // Polled, no time asserted: once the clip's TTL passed, no key of the workspace is left.
    for (let i = 0; i < 300 && (await (client as Redis).keys("rg-keys:*")).length > 0; i++)
      await sleep(10);
    expect(await (client as Redis).keys("rg-keys:*")).to.deep.equal([]);
  });
});

// Every key of a workspace's clips is on its hash tag: the scripts run unchanged on a cluster.
let cluster: ThrowawayCluster | undefined;
let clusterClient: Cluster | undefined;
describe("audio clips on a Redis Cluster", function () {
  this.timeout(60_000);
  before(async () => {
    cluster = await startRedisCluster();
    clusterClient = cluster.client();
  });
  after(async () => {
    clusterClient?.disconnect();
    await cluster?.stop();
  });
  contract("redis cluster", () => new RedisAudioClips(clusterClient as Cluster, "rg-test"));
});

describe("audio clips: the embedded store's process cap", () => {
  it("evicts any workspace's least recently used clip beyond the cap", async () => {
    const clips = new MemoryAudioClips(100);
    await clips.put("a", "h", "m", clip(40), limits(1000));
    await clips.put("b", "h", "m", clip(40), limits(1000));
    const third = await clips.put("c", "h", "m", clip(40), limits(1000));
    expect(third).to.deep.equal({ outcome: "stored", evicted: 1 });
    expect(await clips.get("a", "h")).to.equal(undefined);
    expect(await clips.get("b", "h")).to.not.equal(undefined);
    expect(await clips.put("d", "h", "m", clip(101), limits(1000))).to.deep.equal({
      outcome: "too-large",
    });
  });
});
