import { fileURLToPath } from "node:url";
import type { RegionName } from "../../domain/enums.js";
import { childDatabaseEnv } from "./databases.js";
import { freePort } from "./free-port.js";
import { type Child, makeTempDir, spawnChild } from "./processes.js";
import { MANAGEMENT_KEY } from "./system.js";

/** How a Railgate child process is run, beyond its environment (the bench's needs). */
export interface ChildOptions {
  /** Node flags before the entry point (the bench's --cpu-prof). */
  nodeArgs?: string[];
  /** The node binary (default: this process's): the bench's BENCH_NODE, e.g. the image's Node 22. */
  node?: string;
  /**
   * The child's RAILGATE_LOG_LEVEL (default info). Above info its start-up lines, which say what ports
   * it bound, are not printed: its ports are then picked here first (freePort), and another
   * process may take one before the child binds it. Only for a caller that runs alone on
   * the machine: the bench, at "warn", so a log line per request does not weigh on what it
   * measures.
   */
  logLevel?: string;
}

/** Whether a level prints the info lines the ports are read from. */
export function logsInfo(level: string): boolean {
  return ["trace", "debug", "info"].includes(level);
}

/** The three gateway ports, picked before the child starts (see ChildOptions.logLevel). */
export async function pickedGatewayPorts(): Promise<Record<RegionName, number>> {
  return { global: await freePort(), europe: await freePort(), us: await freePort() };
}

/** RAILGATE_GATEWAY_*PORT for `ports`, or 0 (the child picks and reports them) when there are none. */
export function gatewayPortEnv(ports?: Record<RegionName, number>): Record<string, string> {
  return {
    RAILGATE_GATEWAY_PORT: String(ports?.global ?? 0),
    RAILGATE_GATEWAY_EU_PORT: String(ports?.europe ?? 0),
    RAILGATE_GATEWAY_US_PORT: String(ports?.us ?? 0),
  };
}

export interface SystemProcess {
  child: Child;
  ports: Record<RegionName, number>;
  baseUrl(region?: RegionName): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

const MAIN = fileURLToPath(new URL("../../apps/all-in-one/main.js", import.meta.url));

/** What the system logs once every listener is bound (apps/all-in-one/system.ts). */
const UP_LINE = /"msg":"railgate is up"/;

/** The gateway ports in the child's "railgate is up" line. */
function boundPorts(line: string): Record<RegionName, number> {
  const { gateway } = JSON.parse(line) as { gateway?: Record<RegionName, number> };
  if (!gateway) throw new Error(`no gateway ports in the start-up line: ${line}`);
  return gateway;
}

/**
 * `node dist/apps/all-in-one/main.js` (what `npm start` runs) as a child process against
 * the given Redis, as a deployment runs it: so a test can send it SIGTERM. Resolves once
 * its /healthz answers 200.
 *
 * Every port is 0 and the child reports what it bound: a port picked here and handed on
 * (freePort) could be taken by another process before the child starts listening, and
 * on a loaded machine, with other suites starting systems beside this one, that other
 * process can be another Railgate gateway: its /healthz answers 200 while the child is
 * still loading, and the test then talks to a system on another Redis (401 "Invalid API
 * key" for a key this one created). The child's own start-up line cannot be someone else's.
 */
export async function startSystemProcess(
  redisUrl: string,
  env: Record<string, string> = {},
  options: ChildOptions = {},
): Promise<SystemProcess> {
  const logLevel = options.logLevel ?? "info";
  const picked = logsInfo(logLevel) ? undefined : await pickedGatewayPorts();
  const child = spawnChild(options.node ?? process.execPath, [...(options.nodeArgs ?? []), MAIN], {
    PATH: process.env.PATH,
    // Suites share one database with a Redis each: a fresh Redis is not an emptied one.
    RAILGATE_CONFIG_REFILL: "off",
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
    RAILGATE_HOST: "127.0.0.1",
    ...gatewayPortEnv(picked),
    RAILGATE_GUARDRAIL_GRPC_PORT: "0",
    RAILGATE_SPEECH_GRPC_PORT: "0",
    RAILGATE_SPEECH_ENGINE_WORKERS: "1",
    // With DATABASE_URL "" as `npm start` without one: the file-backed PGlite, in a folder of its own.
    RAILGATE_DATA_DIR: makeTempDir("railgate-data-"),
    ...(await childDatabaseEnv(env)),
    // The ports are read from an info line, unless they were picked here.
    RAILGATE_LOG_LEVEL: logLevel,
  });
  const exited = new Promise<number | null>((resolve) =>
    child.process.once("exit", (code) => resolve(code)),
  );
  try {
    const ports = picked ?? boundPorts(await child.waitForLine(UP_LINE, 60_000));
    const baseUrl = (region: RegionName = "global") => `http://127.0.0.1:${ports[region]}`;
    await waitForHealth(baseUrl(), child);
    return { child, ports, baseUrl, exited };
  } catch (err) {
    await child.stop(2_000);
    throw err;
  }
}

/**
 * Resolves once the system's /healthz answers 200; throws if it exits or is not up in 60 s.
 * Only proof of the child's health when the child already holds `baseUrl`'s port: a port
 * it is still to bind may be answered by another process (see startSystemProcess).
 */
export async function waitForHealth(baseUrl: string, child: Child): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.process.exitCode !== null) {
      throw new Error(
        `system exited (${child.process.exitCode}) during start-up:\n${child.output().slice(-4000)}`,
      );
    }
    try {
      const res = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`system not healthy after 60 s:\n${child.output().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
