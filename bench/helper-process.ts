import { fileURLToPath } from "node:url";
import { type Child, spawnChild } from "../test/kit/processes.js";

export interface HelperProcess {
  child: Child;
  port: number;
}

/**
 * Starts one of the bench's own helper servers (fake-upstream.js,
 * baseline-server.js, floor-server.js, compiled next to this file) as a child process and
 * reads the port it announces on stdout.
 */
export async function startHelper(
  script: "fake-upstream.js" | "baseline-server.js" | "floor-server.js",
  env: NodeJS.ProcessEnv = {},
): Promise<HelperProcess> {
  const file = fileURLToPath(new URL(`./${script}`, import.meta.url));
  const child = spawnChild(process.execPath, [file], { ...process.env, ...env });
  try {
    const line = await child.waitForLine(/^\{"port":\d+\}$/, 15_000);
    return { child, port: (JSON.parse(line) as { port: number }).port };
  } catch (err) {
    await child.stop(1_000);
    throw err;
  }
}
