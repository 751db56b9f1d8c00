import type { Cluster, Redis, Result } from "ioredis";
import type { AudioClipStore, ClipLimits, ClipUsage, PutResult, StoredClip } from "./types.js";

/**
 * Per workspace, on its hash tag `{w:<id>}` (so a Redis Cluster runs the scripts unchanged):
 *   <base>lru     sorted set: clip hash -> last use (a tick of <base>tick, so two uses in one
 *                 millisecond still order: recency is exact, whatever the clocks)
 *   <base>sizes   hash: clip hash -> bytes (kept past the clip's expiry, for the accounting)
 *   <base>bytes   the workspace's bytes stored, what its budget is checked against
 *   <base>m:<h>   the clip's description, with the clip's TTL
 *   <base>c:<h>   the clip's audio, a list of chunks, with the same TTL
 *   <base>stats   hash: hits, misses, collapsed (the console's hit ratio)
 * An expired clip leaves its lru and sizes entries behind: its bytes count until a read finds it
 * gone or eviction reaches it (expired clips are the least recently used, so they go first).
 * Each store extends the bookkeeping keys (lru, sizes, bytes, tick, stats) to the clip's TTL, so
 * a workspace idle for that long, or deleted, leaves no key behind.
 */
const LUA_DROP = `
local function drop(base, lru, sizes, total, h)
  local s = tonumber(redis.call('HGET', sizes, h) or '0')
  redis.call('DEL', base .. 'm:' .. h, base .. 'c:' .. h)
  redis.call('HDEL', sizes, h)
  redis.call('ZREM', lru, h)
  if s > 0 then redis.call('DECRBY', total, s) end
end
`;

/**
 * KEYS: lru, sizes, bytes. ARGV: base, hash, meta, ttlMs, budgetBytes, chunk...
 * Reply: {1, evicted} stored, {0, 0} already there (touched), {-1, 0} larger than the budget.
 */
const PUT = `${LUA_DROP}
local lru, sizes, total = KEYS[1], KEYS[2], KEYS[3]
local base, h, meta = ARGV[1], ARGV[2], ARGV[3]
local ttl, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
local now = redis.call('INCR', base .. 'tick')
local mkey, ckey = base .. 'm:' .. h, base .. 'c:' .. h
if redis.call('EXISTS', mkey) == 1 then
  redis.call('ZADD', lru, now, h)
  return {0, 0}
end
if redis.call('HEXISTS', sizes, h) == 1 then drop(base, lru, sizes, total, h) end
local size = 0
for i = 6, #ARGV do size = size + #ARGV[i] end
if size > budget then return {-1, 0} end
local evicted = 0
local used = tonumber(redis.call('GET', total) or '0')
while used + size > budget do
  local oldest = redis.call('ZRANGE', lru, 0, 0)
  if #oldest == 0 then
    -- Nothing left to evict: whatever the counter still says belongs to no clip.
    redis.call('SET', total, 0)
    break
  end
  drop(base, lru, sizes, total, oldest[1])
  evicted = evicted + 1
  used = tonumber(redis.call('GET', total) or '0')
end
local i = 6
while i <= #ARGV do
  local last = math.min(i + 999, #ARGV)
  redis.call('RPUSH', ckey, unpack(ARGV, i, last))
  i = last + 1
end
redis.call('PEXPIRE', ckey, ttl)
redis.call('SET', mkey, meta, 'PX', ttl)
redis.call('HSET', sizes, h, size)
redis.call('INCRBY', total, size)
redis.call('ZADD', lru, now, h)
-- The bookkeeping lives as long as the newest clip: a workspace idle for a TTL (or deleted)
-- leaves nothing behind.
for _, k in ipairs({lru, sizes, total, base .. 'tick', base .. 'stats'}) do
  redis.call('PEXPIRE', k, ttl)
end
return {1, evicted}
`;

/** KEYS: lru, sizes, bytes, stats. ARGV: base, hash. Reply: {meta, {chunk...}} or nil. */
const GET = `${LUA_DROP}
local lru, sizes, total, stats = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, h = ARGV[1], ARGV[2]
local meta = redis.call('GET', base .. 'm:' .. h)
local chunks = meta and redis.call('LRANGE', base .. 'c:' .. h, 0, -1) or {}
if not meta or #chunks == 0 then
  if redis.call('HEXISTS', sizes, h) == 1 then drop(base, lru, sizes, total, h) end
  return false
end
redis.call('HINCRBY', stats, 'hits', 1)
redis.call('ZADD', lru, redis.call('INCR', base .. 'tick'), h)
return {meta, chunks}
`;

type Client = Redis | Cluster;

type ScriptKeys = [lru: string, sizes: string, bytes: string];

// Named outside the store's rg* commands: redis-commands.ts defines those from one table.
declare module "ioredis" {
  interface RedisCommander<Context> {
    audioClipPut(
      ...args: [
        ...ScriptKeys,
        base: string,
        hash: string,
        meta: string,
        ttlMs: number,
        budgetBytes: number,
        ...chunks: Uint8Array[],
      ]
    ): Result<[number, number], Context>;
    audioClipGetBuffer(
      ...args: [...ScriptKeys, stats: string, base: string, hash: string]
    ): Result<[Buffer, Buffer[]] | null, Context>;
  }
}

/** The Redis store's audio cache (see the key layout above); `prefix` is the store's RAILGATE_REDIS_PREFIX. */
export class RedisAudioClips implements AudioClipStore {
  constructor(
    private readonly client: Client,
    private readonly prefix: string,
  ) {
    client.defineCommand("audioClipPut", { lua: PUT, numberOfKeys: 3 });
    client.defineCommand("audioClipGet", { lua: GET, numberOfKeys: 4 });
  }

  private base(scope: string): string {
    return `${this.prefix}:{w:${scope}}:ac:`;
  }

  private stats(scope: string): string {
    return `${this.base(scope)}stats`;
  }

  private keys(scope: string): ScriptKeys {
    const base = this.base(scope);
    return [`${base}lru`, `${base}sizes`, `${base}bytes`];
  }

  async get(scope: string, hash: string): Promise<StoredClip | undefined> {
    const reply = await this.client.audioClipGetBuffer(
      ...this.keys(scope),
      this.stats(scope),
      this.base(scope),
      hash,
    );
    if (!reply) return undefined;
    return { meta: reply[0].toString("utf8"), chunks: reply[1] };
  }

  async put(
    scope: string,
    hash: string,
    meta: string,
    chunks: readonly Uint8Array[],
    limits: ClipLimits,
  ): Promise<PutResult> {
    const [code, evicted] = await this.client.audioClipPut(
      ...this.keys(scope),
      this.base(scope),
      hash,
      meta,
      limits.ttlMs,
      limits.budgetBytes,
      ...chunks,
    );
    if (code === 1) return { outcome: "stored", evicted };
    return { outcome: code === 0 ? "exists" : "too-large" };
  }

  async usage(scope: string): Promise<ClipUsage> {
    const [lru, , bytes] = this.keys(scope);
    const [clips, stored, counts] = await Promise.all([
      this.client.zcard(lru),
      this.client.get(bytes),
      this.client.hgetall(this.stats(scope)),
    ]);
    return {
      clips,
      bytes: Number(stored ?? 0),
      hits: Number(counts.hits ?? 0),
      misses: Number(counts.misses ?? 0),
      collapsed: Number(counts.collapsed ?? 0),
    };
  }

  async count(scope: string, outcome: "misses" | "collapsed", ttlMs: number): Promise<void> {
    // One round trip, both commands on the one key (a Cluster pipeline needs one slot).
    await this.client
      .multi()
      .hincrby(this.stats(scope), outcome, 1)
      .pexpire(this.stats(scope), ttlMs)
      .exec();
  }
}
