/**
 * `npm run bench`: starts a throwaway Redis, the bench's loopback upstream and
 * the system (node dist/apps/all-in-one/main.js) as child processes, runs the
 * scenarios with autocannon, prints ONE table on stdout (progress goes to
 * stderr) and writes the same data to bench/results/latest.json.
 *
 * Options (environment): BENCH_SECONDS (measured seconds per run, default 8),
 * BENCH_WARMUP_SECONDS (2), BENCH_ENGINE_SAMPLES (5), BENCH_ONLY
 * (comma-separated; runs the scenarios whose id contains one of them:
 * management, speech-proxy, engine, enforcement, audio-cache, peers, engine-memory, request-log,
 * what-if; or detections alone: bench/detections.ts, no system), BENCH_LOG_ROWS (records of the request-log scenario, default 1,000,000),
 * BENCH_WHATIF_ROWS (records of the what-if replay, default 1,000,000, on PostgreSQL),
 * BENCH_PEERS_REQUESTS / BENCH_PEERS_WARMUP (1500 / 1000), BENCH_CPU_PROF=1 (profile the system children
 * into bench/results/prof and print a summary), BENCH_LOG_LEVEL (warn).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../test/kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../test/kit/redis-server.js";
import { ManagementApi } from "./api.js";
import { type BenchConfig, loadBenchConfig, selected } from "./config.js";
import { type HelperProcess, startHelper } from "./helper-process.js";
import { summarizeProfiles } from "./profile-windows.js";
import { audioCacheScenario } from "./scenarios/audio-cache.js";
import { type BaseContext, progress, Reporter, type ScenarioContext } from "./scenarios/context.js";
import { embeddedEngineScenario, engineMemoryScenario } from "./scenarios/embedded-engine.js";
import { enforcementScenario } from "./scenarios/enforcement.js";
import { managementScenario } from "./scenarios/management.js";
import { peersScenario } from "./scenarios/peers.js";
import { requestLogScenario } from "./scenarios/request-log.js";
import { speechProxyScenario } from "./scenarios/speech-proxy.js";
import { whatIfScenario } from "./scenarios/what-if.js";
import { type SystemProcess, startSystem, writeBenchCatalog } from "./system-process.js";
import { renderTable } from "./table.js";

/** Order matters: enforcement materializes the default guardrail, which then governs every key. */
const MAIN_SCENARIOS: [string, (ctx: ScenarioContext) => Promise<void>][] = [
  ["management", managementScenario],
  ["speech-proxy", speechProxyScenario],
  ["engine", embeddedEngineScenario],
  ["enforcement", enforcementScenario],
  ["audio-cache", audioCacheScenario],
];

/** Foreign CPU load above this (in cores) during any measurement gets a warning under the table. */
const NOISE_WARNING_CORES = 0.15;

/** The largest `foreignCpuCores` anywhere in the raw measurements. */
function maxForeignCores(data: unknown): number {
  if (data === null || typeof data !== "object") return 0;
  let max = 0;
  for (const [k, v] of Object.entries(data)) {
    if (k === "foreignCpuCores" && typeof v === "number") max = Math.max(max, v);
    else max = Math.max(max, maxForeignCores(v));
  }
  return max;
}

async function main(config: BenchConfig): Promise<number> {
  const started = Date.now();
  const report = new Reporter();
  const tmpDir = makeTempDir("railgate-bench-");
  let redis: ThrowawayRedis | undefined;
  let upstream: HelperProcess | undefined;
  let system: SystemProcess | undefined;
  let failure: unknown;
  const profiledPids: number[] = [];
  if (config.cpuProf) mkdirSync(config.profileDir, { recursive: true });
  try {
    progress(
      `${config.cores} cores, ${config.seconds} s per measurement (+${config.warmupSeconds} s warm-up)`,
    );
    redis = await startRedis();
    upstream = await startHelper("fake-upstream.js");
    const catalogFile = writeBenchCatalog(tmpDir, upstream.port);
    const wantMain = MAIN_SCENARIOS.some(([id]) => selected(config, id));
    const base: BaseContext = {
      config,
      redisUrl: redis.url,
      upstreamPort: upstream.port,
      upstreamPid: upstream.child.pid,
      tmpDir,
      catalogFile,
      report,
      onSystemStarted: (pid) => profiledPids.push(pid),
    };
    if (wantMain) {
      progress("starting the system");
      system = await startSystem(config, { redisUrl: redis.url, catalogFile });
      base.onSystemStarted(system.pid);
      const ctx: ScenarioContext = { ...base, system, api: new ManagementApi(system.baseUrl) };
      for (const [id, run] of MAIN_SCENARIOS) {
        if (!selected(config, id)) continue;
        progress(`scenario ${id}`);
        await run(ctx);
      }
      // Stopped before the memory run: a quiet machine, and its CPU profile gets written now.
      await system.stop();
      system = undefined;
    }
    // On a quiet machine (the shared system is stopped), with its own Redis and processes.
    if (selected(config, "peers")) {
      progress("scenario peers");
      await peersScenario(base);
    }
    if (selected(config, "engine-memory")) await engineMemoryScenario(base);
    if (selected(config, "request-log")) {
      progress("scenario request-log");
      await requestLogScenario(base);
    }
    if (selected(config, "what-if")) {
      progress("scenario what-if");
      await whatIfScenario(base);
    }
  } catch (err) {
    failure = err;
  } finally {
    await Promise.allSettled([system?.stop(), upstream?.child.stop(5_000)]);
    await redis?.stop().catch(() => {});
    removeTempDir(tmpDir);
  }

  const profiles = config.cpuProf ? summarizeProfiles(config.profileDir, profiledPids) : [];

  const table = renderTable(report.rows);
  console.log(table);
  for (const extra of report.tables) console.log(`\n${extra}`);
  const noise = maxForeignCores(report.measurements);
  if (noise > NOISE_WARNING_CORES) {
    console.log(
      `\nWARNING: other processes kept up to ${noise.toFixed(2)} of ${config.cores} cores busy during a measurement; the numbers are not trustworthy. Re-run on a quiet machine.`,
    );
  }
  const misses = report.rows.filter((r) => r.pass === false).map((r) => r.scenario);
  console.log(
    misses.length === 0
      ? "\nall targets met"
      : `\nmissed targets (${misses.length}): ${misses.join("; ")}`,
  );
  mkdirSync(config.resultsDir, { recursive: true });
  const file = join(config.resultsDir, "latest.json");
  writeFileSync(
    file,
    `${JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        elapsedSeconds: (Date.now() - started) / 1000,
        machine: {
          cores: config.cores,
          cpu: cpus()[0]?.model,
          node: process.version,
          platform: process.platform,
        },
        config: { ...config, resultsDir: undefined, profileDir: undefined },
        maxForeignCpuCores: noise,
        error: failure === undefined ? undefined : String((failure as Error)?.stack ?? failure),
        rows: report.rows,
        measurements: report.measurements,
        profiles,
      },
      null,
      2,
    )}\n`,
  );
  console.error(`[bench] wrote ${file} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  if (failure !== undefined) {
    console.error("[bench] FAILED:", failure);
    return 1;
  }
  return 0;
}

const benchConfig = loadBenchConfig();
// The detectors' and a shadow's cost per request need no system: BENCH_ONLY=detections and
// BENCH_ONLY=shadow print their own tables.
if (benchConfig.only.length > 0 && benchConfig.only.every((o) => o === "detections")) {
  await import("./detections.js");
} else if (benchConfig.only.length > 0 && benchConfig.only.every((o) => o === "shadow")) {
  await import("./shadow-decision.js");
} else {
  process.exitCode = await main(benchConfig);
}
