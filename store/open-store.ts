import { Cluster, Redis, type RedisOptions } from "ioredis";
import { type RailgateConfig, redactUrl, StartupRefused } from "../platform/config/config.js";
import { componentLogger } from "../platform/observability/logger.js";
import { trackStore } from "../platform/observability/metrics.js";
import { type Clock, systemClock } from "../platform/time.js";
import { MemoryStore } from "./memory-store.js";
import { readRepliesBeforeTimeouts } from "./read-replies-first.js";
import { RedisStore } from "./redis-store.js";
import { guardStore } from "./store-availability.js";
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
 * - commandTimeout: a command unanswered after this long fails (a reply already in the socket
 *   after an event-loop stall still wins: see read-replies-first.ts);
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
    readRepliesBeforeTimeouts(cluster);
    return cluster;
  }
  const client = new Redis(config.redisUrl ?? DEFAULT_REDIS_URL, options);
  const duplicate = client.duplicate.bind(client);
  client.duplicate = (overrides) => duplicate({ enableOfflineQueue: true, ...overrides });
  readRepliesBeforeTimeouts(client);
  return client;
}

/** What RAILGATE_STORE and the Redis settings ask for, and the words the start-up line uses. */
type StoreChoice =
  | { kind: "embedded"; reason: string; probeLocal: boolean }
  | { kind: "redis"; url?: string; reason: string };

function storeChoice(config: RailgateConfig, localUrl: string): StoreChoice {
  if (config.store === "embedded") {
    return { kind: "embedded", reason: "RAILGATE_STORE=embedded", probeLocal: false };
  }
  if (config.redisClusterNodes) return { kind: "redis", reason: "RAILGATE_REDIS_CLUSTER_NODES" };
  if (config.redisUrl) return { kind: "redis", url: config.redisUrl, reason: "REDIS_URL" };
  if (config.store === "redis") {
    return {
      kind: "redis",
      url: localUrl,
      reason: "RAILGATE_STORE=redis and REDIS_URL unset: the local default",
    };
  }
  return {
    kind: "embedded",
    reason: "RAILGATE_STORE=auto and neither REDIS_URL nor RAILGATE_REDIS_CLUSTER_NODES is set",
    probeLocal: true,
  };
}

/**
 * Whether a Redis answers at `url`: only to tell an operator who left REDIS_URL unset that one
 * is there and how to use it. Nothing is written to it.
 */
async function answers(config: RailgateConfig, url: string): Promise<boolean> {
  const client = createRedisClient({ ...config, redisUrl: url, redisClusterNodes: undefined });
  client.on("error", () => {});
  try {
    await client.connect();
    return await reachable(client, 500);
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Reports whether `store` answers in railgate_store_up (one PING a second at most), until closed. */
function tracked<S extends Store>(store: S): S {
  let last: { at: number; up: Promise<boolean> } | undefined;
  const untrack = trackStore(store.kind, () => {
    const now = Date.now();
    if (!last || now - last.at >= 1_000) {
      last = {
        at: now,
        up: store.ping().then(
          () => true,
          () => false,
        ),
      };
    }
    return last.up;
  });
  const close = store.close.bind(store);
  store.close = () => {
    untrack();
    return close();
  };
  return store;
}

/**
 * The store RAILGATE_STORE asks for (see StoreChoice), announced with the reason in one line:
 * Redis (at REDIS_URL or RAILGATE_REDIS_CLUSTER_NODES; with RAILGATE_STORE=redis and neither, the local
 * default `localUrl`), which must answer or start-up is refused; or the embedded in-process store,
 * announced loudly, since its state dies with the process and cannot be shared by replicas. A
 * Redis that merely answers on 6379 is never adopted unasked: it may be another application's,
 * and a deployment whose REDIS_URL went missing must not quietly start on a different store.
 * A Redis store answers 503 (not 500) for every call made while Redis is down.
 */
export async function openStore(
  config: RailgateConfig,
  localUrl: string = DEFAULT_REDIS_URL,
  /**
   * Set by a guardrail or speech process of a split deployment (its name): such a process shares
   * keys, policies and counters with the others only through Redis, so an embedded store it
   * was not explicitly given (RAILGATE_STORE=embedded) is refused rather than started on.
   */
  splitProcess?: string,
  /** Admission's clock, for the store's expiries and settlement windows (tests pin one). */
  clock: Clock = systemClock,
): Promise<Store> {
  const choice = storeChoice(config, localUrl);
  if (choice.kind === "embedded" && splitProcess && config.store !== "embedded") {
    throw new StartupRefused(
      `the ${splitProcess} process has no store: ${choice.reason}. Split processes share their state only through Redis: set REDIS_URL (or RAILGATE_REDIS_CLUSTER_NODES), or RAILGATE_STORE=embedded for a process on its own`,
    );
  }
  if (choice.kind === "embedded") {
    const local = choice.probeLocal && (await answers(config, localUrl));
    log.warn(
      {
        store: "embedded",
        reason: choice.reason,
        ...(local ? { unusedRedis: redactUrl(localUrl) } : {}),
      },
      `using the EMBEDDED IN-MEMORY STORE (${choice.reason}): state is lost on exit and cannot be shared between replicas.${
        local
          ? ` A Redis answers at ${redactUrl(localUrl)} and is NOT used: set REDIS_URL=${redactUrl(localUrl)} (or RAILGATE_STORE=redis) to keep state there.`
          : " Set REDIS_URL for production."
      }`,
    );
    return tracked(new MemoryStore(undefined, clock));
  }
  const client = createRedisClient({ ...config, redisUrl: choice.url });
  // The URL may carry a password: only ever log it redacted.
  const where = config.redisClusterNodes?.join(",") ?? redactUrl(choice.url ?? localUrl);
  // Keep start-up failures quiet here; they are reported below.
  client.on("error", () => {});
  try {
    await client.connect();
  } catch {
    // reachable() reports it
  }
  if (!(await reachable(client, 2000))) {
    client.disconnect();
    throw new StartupRefused(
      `Redis at ${where} (${choice.reason}) is not reachable: start it, correct the address, or set RAILGATE_STORE=embedded for a store that lives and dies with this process`,
    );
  }
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
  log.info(
    { store: "redis", redis: where, reason: choice.reason, prefix: config.redisPrefix },
    `using the Redis store at ${where} (${choice.reason}); every key starts with "${config.redisPrefix}:" (RAILGATE_REDIS_PREFIX)`,
  );
  const store = new RedisStore(client, config.redisPrefix, undefined, clock);
  // QUIT needs a connection: closing while Redis is away just drops the client.
  const quit = store.close.bind(store);
  store.close = () => quit().catch(() => client.disconnect());
  return guardStore(tracked(store));
}
