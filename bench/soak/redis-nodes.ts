import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster, Redis } from "ioredis";
import { freePort } from "../../test/kit/free-port.js";
import { type Child, makeTempDir } from "../../test/kit/processes.js";
import { spawnRedis } from "../../test/kit/redis-server.js";

const run = promisify(execFile);

/** One redis-server the soak can kill and restart on its port with what it had persisted. */
export interface RedisNode {
  port: number;
  child: Child;
  kill(): Promise<void>;
  restart(): Promise<void>;
}

/** The soak's Redis: a three-primary cluster or one server, each node with its own data. */
export interface SoakRedis {
  /** What the Railgate processes are given: RAILGATE_REDIS_CLUSTER_NODES or REDIS_URL. */
  env: Record<string, string>;
  nodes: RedisNode[];
  client(): Redis | Cluster;
  stop(): Promise<void>;
}

/**
 * Every write is in the append-only file before Redis answers it (appendfsync always), so a
 * killed node comes back with everything it acknowledged, as a persistent deployment's does:
 * what the soak then finds lost is Railgate's doing, not the throwaway server's.
 */
function startNode(port: number, cluster: boolean): RedisNode {
  const dir = makeTempDir(`railgate-soak-redis-${port}-`);
  const args = [
    "--appendonly",
    "yes",
    "--appendfsync",
    "always",
    ...(cluster
      ? ["--cluster-enabled", "yes", "--cluster-config-file", join(dir, "nodes.conf")]
      : []),
  ];
  const node: RedisNode = {
    port,
    child: spawnRedis(port, dir, args),
    async kill() {
      const p = node.child.process;
      if (p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once("exit", r));
      p.kill("SIGKILL");
      await exited;
    },
    async restart() {
      await node.kill();
      node.child = spawnRedis(port, dir, args);
      await ping(port);
    },
  };
  return node;
}

async function ping(port: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const { stdout } = await run("redis-cli", ["-p", String(port), "ping"]);
      if (stdout.includes("PONG")) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function clusterReady(port: number): Promise<void> {
  for (let i = 0; ; i++) {
    const { stdout } = await run("redis-cli", ["-p", String(port), "cluster", "info"]);
    if (stdout.includes("cluster_state:ok")) return;
    if (i > 400) throw new Error("the Redis Cluster did not become ready");
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function startSoakRedis(kind: "cluster" | "standalone"): Promise<SoakRedis> {
  const ports =
    kind === "cluster"
      ? [await freePort(), await freePort(), await freePort()]
      : [await freePort()];
  const nodes = ports.map((p) => startNode(p, kind === "cluster"));
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.kill()));
  };
  try {
    await Promise.all(ports.map(ping));
    if (kind === "standalone") {
      const url = `redis://127.0.0.1:${ports[0]}`;
      return { env: { REDIS_URL: url }, nodes, client: () => new Redis(url), stop };
    }
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await run("redis-cli", [
      "--cluster",
      "create",
      ...addresses,
      "--cluster-replicas",
      "0",
      "--cluster-yes",
    ]);
    await clusterReady(ports[0] as number);
    return {
      env: { RAILGATE_REDIS_CLUSTER_NODES: addresses.join(",") },
      nodes,
      client: () => new Cluster(ports.map((port) => ({ host: "127.0.0.1", port }))),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
