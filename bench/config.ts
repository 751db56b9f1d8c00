import { availableParallelism } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package root: this file runs as dist/bench/config.js. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Knobs of `npm run bench`, all from the environment so CI and people can shorten or focus a run. */
export interface BenchConfig {
  /** Length of one measured load run. */
  seconds: number;
  /** Unmeasured run before each measurement, so JIT, pools and keep-alive sockets are warm. */
  warmupSeconds: number;
  /** Sequential requests per format in the embedded-engine latency measurement. */
  engineSamples: number;
  /** Measured requests per contestant and concurrency in the peers scenario. */
  peersRequests: number;
  /**
   * Unmeasured requests before each of them. 1,000, not ../shared/peers' 200:
   * after 200 requests V8 is still optimizing the request path on its helper
   * threads, which shows as CPU per request (most of all at 1 connection,
   * measured first) that a server in steady state does not spend.
   */
  peersWarmup: number;
  /** Extra node flags for every Railgate child (BENCH_NODE_ARGS, space-separated), e.g. --trace-gc. */
  nodeArgs: string[];
  /**
   * The node binary of every Railgate child (BENCH_NODE; default the bench's own): the image
   * runs Node 22 where CI runs Node 20. The bench itself, its load and its helpers stay on this one.
   */
  node: string | undefined;
  /** Adds --cpu-prof to every system child; profiles land in `profileDir`. */
  cpuProf: boolean;
  /** Only scenarios whose id contains one of these (comma-separated BENCH_ONLY), all when empty. */
  only: string[];
  /** Level of the system child's pino logger. */
  logLevel: string;
  cores: number;
  resultsDir: string;
  profileDir: string;
}

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new Error(`${name} must be a positive number, got "${raw}"`);
  return n;
}

export function loadBenchConfig(): BenchConfig {
  // Results go next to the sources (bench/results), not into dist/, so they survive rebuilds.
  const resultsDir = join(ROOT, "bench", "results");
  return {
    seconds: positive("BENCH_SECONDS", 8),
    warmupSeconds: positive("BENCH_WARMUP_SECONDS", 2),
    engineSamples: Math.round(positive("BENCH_ENGINE_SAMPLES", 5)),
    peersRequests: Math.round(positive("BENCH_PEERS_REQUESTS", 1_500)),
    peersWarmup: Math.round(positive("BENCH_PEERS_WARMUP", 1_000)),
    nodeArgs: (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    node: process.env.BENCH_NODE || undefined,
    cpuProf: process.env.BENCH_CPU_PROF === "1" || process.env.BENCH_CPU_PROF === "true",
    only: (process.env.BENCH_ONLY ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    logLevel: process.env.BENCH_LOG_LEVEL || "warn",
    cores: availableParallelism(),
    resultsDir,
    profileDir: join(resultsDir, "prof"),
  };
}

export function selected(config: BenchConfig, id: string): boolean {
  return config.only.length === 0 || config.only.some((o) => id.includes(o));
}
