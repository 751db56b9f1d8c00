import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/kit/free-port.js";
import { type Child, spawnChild } from "../test/kit/processes.js";
import { ROOT } from "./config.js";
import { progress } from "./scenarios/context.js";

/**
 * Peer gateways live in their own package (bench/peers/package.json, own
 * lock file) so `npm ci` of Railgate never pulls them in; the peers scenario
 * installs them on first use.
 */
const PEERS_DIR = join(ROOT, "bench", "peers");
const PORTKEY_DIR = join(PEERS_DIR, "node_modules", "@portkey-ai", "gateway");
/** Newer @hono/node-server releases make Portkey answer 500 (`TypeError: immutable`) on audio. */
const HONO_PIN = "1.13.5";

function installedVersion(dir: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string })
      .version;
  } catch {
    return undefined;
  }
}

/** `npm ci --prefix bench/peers` when Portkey is missing; returns its version. */
export function ensurePortkeyInstalled(): string {
  if (!existsSync(join(PORTKEY_DIR, "package.json"))) {
    progress("installing the peer gateways: npm ci --prefix bench/peers");
    execFileSync("npm", ["ci", "--prefix", PEERS_DIR, "--no-audit", "--no-fund"], {
      stdio: ["ignore", "ignore", "inherit"],
    });
  }
  const hono = installedVersion(join(PEERS_DIR, "node_modules", "@hono", "node-server"));
  if (hono !== HONO_PIN) {
    throw new Error(
      `bench/peers has @hono/node-server ${hono}, not ${HONO_PIN}: Portkey would answer 500 on audio (rm -rf bench/peers/node_modules and re-run)`,
    );
  }
  return installedVersion(PORTKEY_DIR) ?? "unknown";
}

export interface PortkeyProcess {
  child: Child;
  origin: string;
}

/**
 * Portkey's own server, headless (no console UI), on a free loopback port.
 * Its logger writes a line per request, so its output goes to a file rather
 * than through the bench (the load generator) while it is measured.
 */
export async function startPortkey(logFile: string): Promise<PortkeyProcess> {
  const pkg = JSON.parse(readFileSync(join(PORTKEY_DIR, "package.json"), "utf8")) as {
    bin: string | Record<string, string>;
  };
  const bin = typeof pkg.bin === "string" ? pkg.bin : Object.values(pkg.bin)[0];
  if (!bin) throw new Error("@portkey-ai/gateway has no bin entry");
  const port = await freePort();
  const child = spawnChild(
    process.execPath,
    [join(PORTKEY_DIR, bin), "--headless", `--port=${port}`],
    { PATH: process.env.PATH, HOME: process.env.HOME },
    { cwd: PEERS_DIR, outputFile: logFile },
  );
  const origin = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.process.exitCode !== null) {
      throw new Error(`portkey exited during start-up:\n${child.output().slice(-2000)}`);
    }
    try {
      const res = await fetch(`${origin}/`, { signal: AbortSignal.timeout(1_000) });
      await res.arrayBuffer();
      if (res.ok) return { child, origin };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await child.stop(1_000);
      throw new Error(`portkey did not answer on ${origin}:\n${child.output().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
