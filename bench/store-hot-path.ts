import { newId } from "../domain/ids.js";
import type { Admission } from "../store/admission.js";
import { keyLimitCounter } from "../store/key-usage.js";
import { createRedisClient } from "../store/open-store.js";
import { RedisStore } from "../store/redis-store.js";
import { startRedis } from "../test/kit/redis-server.js";

/**
 * The store's share of one speech request, alone: `node dist/bench/store-hot-path.js`
 * (after a build) runs admit + settle pairs on a RedisStore against a
 * throwaway Redis, STORE_BENCH_CONCURRENCY (50) at a time, STORE_BENCH_REQUESTS
 * (20,000) measured after as many unmeasured, with every counter a request
 * meets (a rate limit, metered credits, a key limit per day, two budgets),
 * and prints this process's CPU µs per request (process.cpuUsage), Redis's
 * own, and the scripts and bytes Redis received per request. Not part of
 * `npm run bench`.
 */
function envNumber(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

async function main(): Promise<void> {
  const requests = envNumber("STORE_BENCH_REQUESTS", 20_000);
  const concurrency = envNumber("STORE_BENCH_CONCURRENCY", 50);
  const redis = await startRedis();
  const probe = redis.client();
  const client = createRedisClient({ redisUrl: redis.url, redisClusterNodes: undefined });
  await client.connect();
  const store = new RedisStore(client, "railgate");
  const scope = newId();
  const keyHash = "a".repeat(64);
  await store.addCredits(scope, 1e15);
  const admission = (): Admission => {
    const now = new Date();
    const day = Math.floor(now.getTime() / 86_400_000);
    return {
      id: newId(),
      scope,
      keyHash,
      rate: { limit: 1e12, windowMs: 60_000, nowMs: now.getTime() },
      creditMicros: 800,
      keyLimitMicros: 1e15,
      keyLimitWindow: keyLimitCounter(keyHash, "daily", now),
      keyMicros: 800,
      budgets: [0, 1].map((i) => ({
        guardrailId: i === 0 ? "g-key" : "g-member",
        entity: i === 0 ? `key:${keyHash}` : "member:user-1",
        firstDay: day,
        day,
        limitMicros: 1e15,
        amountMicros: 800,
      })),
    };
  };
  const one = async () => {
    const a = admission();
    const r = await store.admit(a);
    if (!r.ok) throw new Error(`refused: ${r.reason}`);
    await store.settle(
      a,
      {
        creditMicros: 600,
        keyMicros: 600,
        byokMicros: 0,
        budgets: a.budgets.map((b) => ({ ...b, amountMicros: 600 })),
      },
      r.metered,
    );
  };
  const run = async (n: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next++ < n) await one();
      }),
    );
  };
  const counters = async () => {
    const info = await probe.info("all");
    const num = (re: RegExp) => Number(re.exec(info)?.[1] ?? 0);
    return {
      scripts: num(/^cmdstat_evalsha:calls=(\d+)/m) + num(/^cmdstat_eval:calls=(\d+)/m),
      bytes: num(/^total_net_input_bytes:(\d+)/m),
      cpuMs: (num(/^used_cpu_user:([\d.]+)/m) + num(/^used_cpu_sys:([\d.]+)/m)) * 1000,
    };
  };
  try {
    await run(requests);
    const before = await counters();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(requests);
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const after = await counters();
    const per = (v: number) => (v / requests).toFixed(2);
    process.stdout.write(
      `c=${concurrency} n=${requests}: ${per(((cpu.user + cpu.system) / 1000) * 1000)} µs CPU/req (this process), ` +
        `redis ${per((after.cpuMs - before.cpuMs) * 1000)} µs CPU/req, ` +
        `${per(after.scripts - before.scripts)} scripts/req, ${per(after.bytes - before.bytes)} B in/req, ` +
        `${((requests / wall) * 1000).toFixed(0)} req/s\n`,
    );
  } finally {
    await store.close();
    probe.disconnect();
    await redis.stop();
  }
}

await main();
