import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { join } from "node:path";
import type { RegionName } from "../platform/regions.js";
import {
  builtInEspeak,
  endpoint,
  model,
  provider,
  writeCatalogFile,
} from "../test/kit/catalog-entries.js";
import { freePort } from "../test/kit/free-port.js";
import { type Child, spawnChild } from "../test/kit/processes.js";
import { waitForHealth } from "../test/kit/system-process.js";
import { type BenchConfig, ROOT } from "./config.js";
import { MANAGEMENT_KEY, UPSTREAM_MODEL } from "./constants.js";
import { peakRssMb } from "./processes.js";

export interface SystemProcess {
  child: Child;
  pid: number;
  /** http://127.0.0.1:<global port> */
  baseUrl: string;
  ports: Record<RegionName, number>;
  peakRssMb(): number | undefined;
  stop(): Promise<void>;
}

/**
 * The catalog the system runs with: the embedded eSpeak model exactly as
 * shipped, plus one model whose only endpoint is the bench's loopback upstream.
 */
export function writeBenchCatalog(dir: string, upstreamPort: number): string {
  return writeCatalogFile(dir, {
    providers: {
      "bench-upstream": provider(`http://127.0.0.1:${upstreamPort}/v1`, { timeout_ms: 30_000 }),
    },
    models: [
      builtInEspeak(),
      model(
        UPSTREAM_MODEL,
        [
          // Non-zero so budgets really meter something in the enforcement scenario.
          endpoint("bench-upstream", { price: 1, upstreamModel: "fixed-clip", byok: false }),
        ],
        {
          name: "Bench fixed clip",
          description: "Loopback upstream answering a fixed 2 s PCM clip",
          voices: ["alloy"],
        },
      ),
    ],
  });
}

/** Environment shared by every Railgate process the bench starts. */
async function railgateEnv(
  config: BenchConfig,
  options: { redisUrl: string; catalogFile: string; env?: NodeJS.ProcessEnv },
): Promise<{ env: NodeJS.ProcessEnv; ports: SystemProcess["ports"] }> {
  const ports = { global: await freePort(), europe: await freePort(), us: await freePort() };
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "production",
    REDIS_URL: options.redisUrl,
    RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
    RAILGATE_HOST: "127.0.0.1",
    GATEWAY_PORT: String(ports.global),
    GATEWAY_EU_PORT: String(ports.europe),
    GATEWAY_US_PORT: String(ports.us),
    GUARDRAIL_GRPC_PORT: String(await freePort()),
    SPEECH_GRPC_PORT: String(await freePort()),
    SPEECH_CATALOG_FILE: options.catalogFile,
    LOG_LEVEL: config.logLevel,
    // The per-key limiter would otherwise cap the load runs at 600 requests a minute.
    RATE_LIMIT_PER_MINUTE: "100000000",
    ...options.env,
  };
  return { env, ports };
}

/** `node [--cpu-prof ...] dist/<entry>` with the bench's environment. */
function spawnRailgate(config: BenchConfig, entry: string, env: NodeJS.ProcessEnv): Child {
  // Node's default profile name carries pid and thread id, so engine worker
  // threads (which inherit the flag) do not overwrite the main thread's file.
  const nodeArgs = [
    ...config.nodeArgs,
    ...(config.cpuProf ? ["--cpu-prof", "--cpu-prof-dir", config.profileDir] : []),
  ];
  return spawnChild(process.execPath, [...nodeArgs, join(ROOT, "dist", entry)], env, {
    cwd: ROOT,
  });
}

/**
 * `node dist/apps/all-in-one/main.js` as a child process with its own ports, the
 * throwaway Redis and the bench catalog. A separate process so its VmHWM is
 * the system's own peak memory, and so --cpu-prof profiles only the system.
 */
export async function startSystem(
  config: BenchConfig,
  options: { redisUrl: string; catalogFile: string; env?: NodeJS.ProcessEnv },
): Promise<SystemProcess> {
  const { env, ports } = await railgateEnv(config, options);
  const child = spawnRailgate(config, join("apps", "all-in-one", "main.js"), env);
  const baseUrl = `http://127.0.0.1:${ports.global}`;
  try {
    // "railgate is up" is an info line: it is printed only when the level lets it through.
    const upLine = logsInfo(config.logLevel)
      ? child.waitForLine(/railgate is up/, 60_000)
      : Promise.resolve("");
    await Promise.all([upLine, waitForHealth(baseUrl, child)]);
  } catch (err) {
    await child.stop(2_000);
    throw err;
  }
  return {
    child,
    pid: child.pid,
    baseUrl,
    ports,
    peakRssMb: () => peakRssMb(child.pid),
    stop: () => child.stop(),
  };
}

/** The split deployment: gateway, guardrail and speech each in its own process, over gRPC. */
export interface SplitSystem {
  baseUrl: string;
  pids: { gateway: number; guardrail: number; speech: number };
  stop(): Promise<void>;
}

/**
 * Railgate as docker-compose runs it, on loopback: the guardrail and speech
 * services on their gRPC ports, and a gateway that reaches them at
 * GUARDRAIL_GRPC_URL / SPEECH_GRPC_URL with the shared service credential.
 */
export async function startSplitSystem(
  config: BenchConfig,
  options: { redisUrl: string; catalogFile: string },
): Promise<SplitSystem> {
  const { env } = await railgateEnv(config, {
    ...options,
    env: { RAILGATE_INTERNAL_TOKEN: randomBytes(32).toString("hex") },
  });
  env.GUARDRAIL_GRPC_URL = `http://127.0.0.1:${env.GUARDRAIL_GRPC_PORT}`;
  env.SPEECH_GRPC_URL = `http://127.0.0.1:${env.SPEECH_GRPC_PORT}`;
  const guardrail = spawnRailgate(config, join("apps", "guardrail", "main.js"), env);
  const speech = spawnRailgate(config, join("apps", "speech", "main.js"), env);
  const gateway = spawnRailgate(config, join("apps", "gateway", "main.js"), env);
  const all = [gateway, guardrail, speech];
  const baseUrl = `http://127.0.0.1:${env.GATEWAY_PORT}`;
  try {
    await Promise.all([
      waitForHealth(baseUrl, gateway),
      waitForPort(Number(env.SPEECH_GRPC_PORT), speech),
    ]);
  } catch (err) {
    await Promise.all(all.map((c) => c.stop(2_000)));
    throw err;
  }
  return {
    baseUrl,
    pids: { gateway: gateway.pid, guardrail: guardrail.pid, speech: speech.pid },
    // The gateway first, so no request is in flight when the services go.
    stop: async () => {
      await gateway.stop();
      await Promise.all([guardrail.stop(), speech.stop()]);
    },
  };
}

/** Resolves once something accepts TCP connections on the port (a gRPC listener is up). */
async function waitForPort(port: number, child: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.process.exitCode !== null) {
      throw new Error(
        `process exited (${child.process.exitCode}) during start-up:\n${child.output().slice(-4000)}`,
      );
    }
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) {
      throw new Error(`nothing listens on ${port} after 60 s:\n${child.output().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function logsInfo(level: string): boolean {
  return ["trace", "debug", "info"].includes(level);
}
