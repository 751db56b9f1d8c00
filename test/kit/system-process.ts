import { fileURLToPath } from "node:url";
import type { RegionName } from "../../platform/regions.js";
import { freePort } from "./free-port.js";
import { type Child, spawnChild } from "./processes.js";
import { MANAGEMENT_KEY } from "./system.js";

export interface SystemProcess {
  child: Child;
  ports: Record<RegionName, number>;
  baseUrl(region?: RegionName): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
}

const MAIN = fileURLToPath(new URL("../../apps/all-in-one/main.js", import.meta.url));

/**
 * `node dist/apps/all-in-one/main.js` (what `npm start` runs) as a child process on
 * free ports against the given Redis, as a deployment runs it: so a test can
 * send it SIGTERM. Resolves once its /healthz answers 200.
 */
export async function startSystemProcess(
  redisUrl: string,
  env: Record<string, string> = {},
): Promise<SystemProcess> {
  const ports = { global: await freePort(), europe: await freePort(), us: await freePort() };
  const child = spawnChild(process.execPath, [MAIN], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
    RAILGATE_HOST: "127.0.0.1",
    GATEWAY_PORT: String(ports.global),
    GATEWAY_EU_PORT: String(ports.europe),
    GATEWAY_US_PORT: String(ports.us),
    GUARDRAIL_GRPC_PORT: String(await freePort()),
    SPEECH_GRPC_PORT: String(await freePort()),
    SPEECH_ENGINE_WORKERS: "1",
    LOG_LEVEL: "info",
    ...env,
  });
  const exited = new Promise<number | null>((resolve) =>
    child.process.once("exit", (code) => resolve(code)),
  );
  const baseUrl = (region: RegionName = "global") => `http://127.0.0.1:${ports[region]}`;
  try {
    await waitForHealth(baseUrl(), child);
  } catch (err) {
    await child.stop(2_000);
    throw err;
  }
  return { child, ports, baseUrl, exited };
}

/** Resolves once the system's /healthz answers 200; throws if it exits or is not up in 60 s. */
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
