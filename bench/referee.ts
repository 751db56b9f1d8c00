import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { freePort } from "../test/kit/free-port.js";
import { makeTempDir, removeTempDir } from "../test/kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../test/kit/redis-server.js";
import { ManagementApi } from "./api.js";
import { loadBenchConfig, ROOT } from "./config.js";
import { UPSTREAM_MODEL } from "./constants.js";
import {
  type SplitSystem,
  type SystemProcess,
  startSplitSystem,
  startSystem,
  writeBenchCatalog,
} from "./system-process.js";

/**
 * Railgate as a contestant of the referee, `../shared/peers/run.sh` (its README: "To add a
 * gateway without editing code"): `node dist/bench/referee.js` (after `npm run build`) picks
 * the upstream port the referee will use, starts Railgate as `npm start` runs it and as
 * docker-compose runs it (the bench's processes, each on its own throwaway Redis, with a
 * catalog whose one upstream model points at that port), mints a key on each, and runs the
 * referee with both as EXTRA_CONTESTANTS and their processes in EXTRA_CPU_PIDS. The referee
 * prints its own tables; this adds nothing to them. REFEREE_N (3000) and REFEREE_WARMUP (1000)
 * become the referee's N and WARMUP; REFEREE_SPLIT=0 leaves the split deployment out.
 */

const PEERS = join(ROOT, "..", "shared", "peers", "run.sh");

/** The referee's contestant text: NAME=URL|Header: value|model=... */
function contestant(name: string, origin: string, secret: string): string {
  return `${name}=${origin}/api/v1/audio/speech|authorization: Bearer ${secret}|model=${UPSTREAM_MODEL}`;
}

function runReferee(env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [PEERS], { env, stdio: "inherit" });
    child.once("error", reject);
    child.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

async function main(): Promise<number> {
  if (!existsSync(PEERS)) {
    process.stderr.write(`referee: ${PEERS} not found (../shared beside the project)\n`);
    return 2;
  }
  const config = loadBenchConfig();
  const withSplit = process.env.REFEREE_SPLIT !== "0";
  const dir = makeTempDir("railgate-referee-");
  const redises: ThrowawayRedis[] = [];
  let system: SystemProcess | undefined;
  let split: SplitSystem | undefined;
  try {
    const upstreamPort = await freePort();
    const catalogFile = writeBenchCatalog(dir, upstreamPort);
    const oneRedis = await startRedis();
    redises.push(oneRedis);
    system = await startSystem(config, { redisUrl: oneRedis.url, catalogFile });
    const contestants = [
      contestant(
        "railgate",
        system.baseUrl,
        (await new ManagementApi(system.baseUrl).createKey("referee")).secret,
      ),
    ];
    const cpuPids = [`railgate=${system.pid}`];
    if (withSplit) {
      const splitRedis = await startRedis();
      redises.push(splitRedis);
      split = await startSplitSystem(config, { redisUrl: splitRedis.url, catalogFile });
      const secret = (await new ManagementApi(split.baseUrl).createKey("referee")).secret;
      contestants.push(contestant("railgate-split", split.baseUrl, secret));
      for (const [name, pid] of Object.entries(split.pids)) cpuPids.push(`split-${name}=${pid}`);
    }
    return await runReferee({
      ...process.env,
      UPSTREAM_PORT: String(upstreamPort),
      N: process.env.REFEREE_N ?? "3000",
      WARMUP: process.env.REFEREE_WARMUP ?? "1000",
      EXTRA_CONTESTANTS: contestants.join(";;"),
      EXTRA_CPU_PIDS: cpuPids.join(","),
    });
  } finally {
    await system?.stop();
    await split?.stop();
    for (const r of redises) await r.stop();
    removeTempDir(dir);
  }
}

process.exitCode = await main();
