import { Cluster, Redis, type RedisOptions } from "ioredis";
import { type RailgateConfig, redactUrl } from "../platform/config.js";
import { componentLogger } from "../platform/logger.js";
import { guardStore } from "./availability.js";
import { MemoryStore } from "./memory-store.js";
import { RedisStore } from "./redis-store.js";
import type { Store } from "./types.js";

const log = componentLogger("store");
const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

type ClientConfig = Pick<RailgateConfig, "redisUrl" | "redisClusterNodes"> &
  Partial<Pick<RailgateConfig, "redisCommandTimeoutMs" | "redisConnectTimeoutMs">>;

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

/**
 * How every command connection talks to Redis, so that a Redis that is down
 * or frozen costs a request at most the command time-out (then 503), never a
 * hang, and a command that failed is never run later behind the caller's back:
 * - commandTimeout: a command unanswered after this long fails;
 * - enableOfflineQueue off: while disconnected, commands fail at once instead
 *   of queueing (a queued command that timed out would still run on reconnect,
 *   e.g. an admission reserving budget that nobody ever settles);
 * - maxRetriesPerRequest 0 and autoResendUnfulfilledCommands off: a command
 *   in flight when the connection drops fails, and is not sent again.
 * The client itself keeps reconnecting in the background.
 */
function commandOptions(config: ClientConfig): RedisOptions {
  return {
    lazyConnect: true,
    commandTimeout: config.redisCommandTimeoutMs ?? 1000,
    connectTimeout: config.redisConnectTimeoutMs ?? 2000,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    // Reconnect quickly at first, then every second at most while Redis stays away.
    retryStrategy: (attempt: number) => Math.min(50 * 2 ** attempt, 1000),
  };
}

/** A client for tests and tools that need to talk to the same Redis. */
export function createRedisClient(config: ClientConfig): Redis | Cluster {
  const options = commandOptions(config);
  if (config.redisClusterNodes) {
    const cluster = new Cluster(
      config.redisClusterNodes.map((n) => {
        const [host, port] = n.split(":");
        return { host, port: Number(port || 6379) };
      }),
      { lazyConnect: true, enableOfflineQueue: false, redisOptions: options },
    );
    // The pub/sub connection (a duplicate) subscribes before it has connected: it needs the
    // offline queue that command connections do without.
    const duplicate = cluster.duplicate.bind(cluster);
    cluster.duplicate = (nodes, overrides) =>
      duplicate(nodes, { enableOfflineQueue: true, ...overrides });
    return cluster;
  }
  const client = new Redis(config.redisUrl ?? DEFAULT_REDIS_URL, options);
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (overrides) => duplicate({ enableOfflineQueue: true, ...overrides });
  return client;
}

/**
 * Redis when one is reachable; otherwise the embedded in-process store,
 * announced loudly, since its state dies with the process and cannot be
 * shared by replicas. A Redis that was named explicitly must be reachable.
 * A Redis store answers 503 (not 500) for every call made while Redis is down.
 */
export async function openStore(
  config: RailgateConfig,
  defaultUrl: string = DEFAULT_REDIS_URL,
): Promise<Store> {
  const explicit = Boolean(config.redisUrl || config.redisClusterNodes);
  const client = createRedisClient({ ...config, redisUrl: config.redisUrl ?? defaultUrl });
  // The URL may carry a password: only ever log it redacted.
  const where = config.redisClusterNodes?.join(",") ?? redactUrl(config.redisUrl ?? defaultUrl);
  // Keep start-up failures quiet here; they are reported below.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch {
    // reachable() reports it
  }
  if (await reachable(client, 2000)) {
    client.removeAllListeners("error");
    let lastError = "";
    client.on("error", (err: Error) => {
      // While Redis is away every reconnection attempt fails the same way: say it once.
      if (err.message === lastError) return;
      lastError = err.message;
      log.error({ err: err.message }, "redis connection error");
    });
    client.on("ready", () => {
      if (lastError) log.info({ redis: where }, "redis connection restored");
      lastError = "";
    });
    log.info({ redis: where }, "using Redis store");
    const store = new RedisStore(client, config.redisPrefix);
    // QUIT needs a connection: closing while Redis is away just drops the client.
    const quit = store.close.bind(store);
    store.close = () => quit().catch(() => client.disconnect());
    return guardStore(store);
  }
  client.disconnect();
  if (explicit) {
    throw new Error(`Redis at ${where} is not reachable`);
  }
  log.warn(
    "NO REDIS REACHABLE at %s: using the EMBEDDED IN-MEMORY STORE. State is lost on exit and cannot be shared between replicas. Set REDIS_URL for production.",
    redactUrl(defaultUrl),
  );
  return new MemoryStore();
}
