import { randomBytes } from "node:crypto";
import { appEntry, type ProcessKind, upLine } from "./app-entries.js";
import { type Child, spawnChild } from "./processes.js";
import { MANAGEMENT_KEY } from "./system.js";
import { waitForHealth } from "./system-process.js";
import { TcpBalancer } from "./tcp-balancer.js";

export type ReplicaKind = ProcessKind;

/** One process of the deployment and the port its balancer sends it (gateway: the global one). */
export interface Replica {
  kind: ReplicaKind;
  child: Child;
  port: number;
  url: string;
}

/**
 * Several replicas of each process, as Kubernetes runs them: every process on one Redis Cluster
 * and one PostgreSQL request log, a round-robin TCP balancer in front of each kind. The gateways
 * reach the services through the services' balancers (a Kubernetes Service's ClusterIP: one
 * address, several pods), and clients reach the gateways through theirs.
 */
export interface ClusterDeployment {
  /** The gateways' balancer: what clients use. */
  url: string;
  replicas: Record<ReplicaKind, Replica[]>;
  balancers: Record<ReplicaKind, TcpBalancer>;
  /**
   * A rolling-update step, as Kubernetes takes one: starts a replacement of
   * `replicas[kind][index]` and puts it in the balancer, takes the old one out of the balancer
   * (its endpoint leaves the Service), waits `PRE_STOP_MS` (the chart's preStop sleep), then
   * sends it SIGTERM and waits for it to exit (it must exit 0). Without the pause, a connection
   * the balancer routed just before the SIGTERM can still sit in the kernel's accept queue when
   * the listener closes, and the kernel resets it: no server can answer a connection it never
   * accepted (seen once in a CI run, 1 request in 1,636).
   */
  replace(kind: ReplicaKind, index: number): Promise<ReplaceStep>;
  stop(): Promise<void>;
}

/** How one rolling-update step went: the old process's exit code, and how long each half took. */
export interface ReplaceStep {
  exitCode: number | null;
  /** From spawning the replacement to its start-up line (gateway: its /healthz answering). */
  startMs: number;
  /** From SIGTERM to the old process's exit (its drain). */
  drainMs: number;
}

export interface ClusterDeploymentOptions {
  redisClusterNodes: string[];
  databaseUrl: string;
  gateways: number;
  guardrails: number;
  speeches: number;
  /** Goes to every process (a catalog file, a grace period). */
  env?: Record<string, string>;
}

/**
 * Between taking a replica out of its balancer and its SIGTERM: time for a connection the
 * balancer was already making to it to be accepted (the chart sleeps 5 s, for kube-proxy).
 */
const PRE_STOP_MS = 200;

/** The port in a gRPC process's "is up" line. */
async function grpcPortOf(child: Child, kind: "guardrail" | "speech"): Promise<number> {
  const line = await child.waitForLine(upLine(kind), 60_000);
  return (JSON.parse(line) as { grpcPort: number }).grpcPort;
}

export async function startClusterDeployment(
  options: ClusterDeploymentOptions,
): Promise<ClusterDeployment> {
  const common: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    // Suites share one database with a Redis each: a fresh Redis is not an emptied one.
    RAILGATE_CONFIG_REFILL: "off",
    HOME: process.env.HOME,
    RAILGATE_REDIS_CLUSTER_NODES: options.redisClusterNodes.join(","),
    DATABASE_URL: options.databaseUrl,
    RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
    RAILGATE_INTERNAL_TOKEN: randomBytes(32).toString("hex"),
    RAILGATE_HOST: "127.0.0.1",
    RAILGATE_GRPC_HOST: "127.0.0.1",
    RAILGATE_GATEWAY_PORT: "0",
    RAILGATE_GATEWAY_EU_PORT: "0",
    RAILGATE_GATEWAY_US_PORT: "0",
    RAILGATE_GUARDRAIL_GRPC_PORT: "0",
    RAILGATE_SPEECH_GRPC_PORT: "0",
    RAILGATE_EMBEDDED_ENGINE: "off",
    RAILGATE_SPEECH_ENGINE_WORKERS: "1",
    ...options.env,
    // The ports are read from info lines: they must be printed.
    RAILGATE_LOG_LEVEL: "info",
  };
  const balancers: Record<ReplicaKind, TcpBalancer> = {
    guardrail: await TcpBalancer.start(),
    speech: await TcpBalancer.start(),
    gateway: await TcpBalancer.start(),
  };
  const all = new Set<Child>();

  async function startReplica(kind: ReplicaKind): Promise<Replica> {
    const extra =
      kind === "gateway"
        ? {
            RAILGATE_GUARDRAIL_GRPC_URL: balancers.guardrail.url,
            RAILGATE_SPEECH_GRPC_URL: balancers.speech.url,
          }
        : {};
    const child = spawnChild(process.execPath, [appEntry(kind)], { ...common, ...extra });
    all.add(child);
    child.process.once("exit", () => all.delete(child));
    try {
      if (kind !== "gateway") {
        const port = await grpcPortOf(child, kind);
        return { kind, child, port, url: `http://127.0.0.1:${port}` };
      }
      const line = await child.waitForLine(/"msg":"gateway is up"/, 60_000);
      const port = (JSON.parse(line) as { gateway: { global: number } }).gateway.global;
      const url = `http://127.0.0.1:${port}`;
      // Its own port, already bound: a 200 here is this gateway's (and its services answer).
      await waitForHealth(url, child);
      return { kind, child, port, url };
    } catch (err) {
      await child.stop(2_000);
      throw err;
    }
  }

  const replicas: Record<ReplicaKind, Replica[]> = { guardrail: [], speech: [], gateway: [] };
  const counts: [ReplicaKind, number][] = [
    ["guardrail", options.guardrails],
    ["speech", options.speeches],
    ["gateway", options.gateways],
  ];
  const stop = async () => {
    for (const c of all) c.process.kill("SIGCONT");
    await Promise.all(replicas.gateway.map((r) => r.child.stop(5_000)));
    await Promise.all([...all].map((c) => c.stop(5_000)));
    await Promise.all(Object.values(balancers).map((b) => b.close()));
  };
  try {
    // Services first (the gateways' health needs them), each kind's replicas side by side.
    for (const [kind, n] of counts) {
      const started = await Promise.all(Array.from({ length: n }, () => startReplica(kind)));
      for (const r of started) {
        replicas[kind].push(r);
        balancers[kind].add(r.port);
      }
    }
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    url: balancers.gateway.url,
    replicas,
    balancers,
    async replace(kind, index) {
      const old = replicas[kind][index];
      if (!old) throw new Error(`no ${kind} replica ${index}`);
      const spawnedAt = Date.now();
      const fresh = await startReplica(kind);
      const startMs = Date.now() - spawnedAt;
      balancers[kind].add(fresh.port);
      replicas[kind][index] = fresh;
      // A replica already killed (SIGKILL: exitCode stays null, signalCode is set) is replaced too.
      const gone = old.child.process.exitCode !== null || old.child.process.signalCode !== null;
      const exited = new Promise<number | null>((resolve) =>
        gone
          ? resolve(old.child.process.exitCode)
          : old.child.process.once("exit", (code) => resolve(code)),
      );
      balancers[kind].remove(old.port);
      await new Promise((r) => setTimeout(r, PRE_STOP_MS));
      const signalledAt = Date.now();
      old.child.process.kill("SIGTERM");
      const exitCode = await exited;
      const drainMs = Date.now() - signalledAt;
      return { exitCode, startMs, drainMs };
    },
    stop,
  };
}
