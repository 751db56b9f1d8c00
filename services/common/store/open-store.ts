import { Cluster, Redis } from "ioredis";
import type { RailgateConfig } from "../config.js";
import { componentLogger } from "../logger.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { Store } from "./types.js";

const log = componentLogger("store");
const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

async function reachable(client: Redis | Cluster, timeoutMs: number): Promise<boolean> {
  const timer = new Promise<false>((resolve) =>
    setTimeout(() => resolve(false), timeoutMs).unref(),
  );
  const ping = client.ping().then(
    () => true,
    () => false,
  );
  return Promise.race([ping, timer]);
}

/** A client for tests and tools that need to talk to the same Redis. */
export function createRedisClient(config: Pick<RailgateConfig, "redisUrl" | "redisClusterNodes">) {
  if (config.redisClusterNodes) {
    return new Cluster(
      config.redisClusterNodes.map((n) => {
        const [host, port] = n.split(":");
        return { host, port: Number(port || 6379) };
      }),
      { lazyConnect: true },
    );
  }
  return new Redis(config.redisUrl ?? DEFAULT_REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
  });
}

/**
 * Redis when one is reachable; otherwise the embedded in-process store,
 * announced loudly, since its state dies with the process and cannot be
 * shared by replicas. A Redis that was named explicitly must be reachable.
 */
export async function openStore(
  config: RailgateConfig,
  defaultUrl: string = DEFAULT_REDIS_URL,
): Promise<Store> {
  const explicit = Boolean(config.redisUrl || config.redisClusterNodes);
  const client = createRedisClient({ ...config, redisUrl: config.redisUrl ?? defaultUrl });
  // Keep start-up failures quiet here; they are reported below.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch {
    // reachable() reports it
  }
  if (await reachable(client, 2000)) {
    client.removeAllListeners("error");
    client.on("error", (err) => log.error({ err: err.message }, "redis connection error"));
    log.info(
      { redis: config.redisClusterNodes ?? config.redisUrl ?? defaultUrl },
      "using Redis store",
    );
    return new RedisStore(client, config.redisPrefix);
  }
  client.disconnect();
  if (explicit) {
    throw new Error(
      `Redis at ${config.redisClusterNodes?.join(",") ?? config.redisUrl} is not reachable`,
    );
  }
  log.warn(
    "NO REDIS REACHABLE at %s: using the EMBEDDED IN-MEMORY STORE. State is lost on exit and cannot be shared between replicas. Set REDIS_URL for production.",
    defaultUrl,
  );
  return new MemoryStore();
}
