import type { RegionName } from "../domain/enums.js";
import {
  builtInEspeak,
  endpoint,
  model,
  provider,
  writeCatalogFile,
} from "../test/kit/catalog-entries.js";
import { createTestDatabase } from "../test/kit/databases.js";
import { type Child, makeTempDir } from "../test/kit/processes.js";
import { startSplitSystem as startKitSplitSystem } from "../test/kit/split-system.js";
import { npmStartNodeFlags, serviceCommandFlags } from "../test/kit/start-commands.js";
import { type ChildOptions, startSystemProcess } from "../test/kit/system-process.js";
import type { BenchConfig } from "./config.js";
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

/**
 * What the bench changes in the test kit's Railgate processes (test/kit/system-process.ts,
 * split-system.ts, which start them): its own key and catalog, the file-backed PGlite (the
 * split deployment: a PostgreSQL database, see startSplitSystem), no per-key limit, the
 * engine's default pool, and node flags and log level of its own.
 */
function benchChild(
  config: BenchConfig,
  options: { catalogFile: string; env?: NodeJS.ProcessEnv },
): { env: Record<string, string>; child: ChildOptions } {
  // A scenario's own settings (a Redis prefix, the request log's database) come last.
  const own = Object.entries(options.env ?? {}).flatMap(([k, v]) =>
    v === undefined ? [] : [[k, v] as const],
  );
  return {
    env: {
      NODE_ENV: "production",
      RAILGATE_MANAGEMENT_KEY: MANAGEMENT_KEY,
      RAILGATE_SPEECH_CATALOG_FILE: options.catalogFile,
      // The per-key limiter would otherwise cap the load runs at RAILGATE_RATE_LIMIT_PER_MINUTE's default.
      RAILGATE_RATE_LIMIT_PER_MINUTE: "100000000",
      // The request log without DATABASE_URL: the embedded PGlite, file-backed in a scratch folder.
      DATABASE_URL: "",
      RAILGATE_DATA_DIR: makeTempDir("railgate-bench-data-"),
      // Empty is unset: one engine worker per core, as deployed (the kit's tests run one).
      RAILGATE_SPEECH_ENGINE_WORKERS: "",
      RAILGATE_EMBEDDED_ENGINE: "auto",
      ...Object.fromEntries(own),
    },
    child: {
      logLevel: config.logLevel,
      node: config.node,
      // Node's default profile name carries pid and thread id, so engine worker
      // threads (which inherit the flag) do not overwrite the main thread's file.
      nodeArgs: [
        ...config.nodeArgs,
        ...(config.cpuProf ? ["--cpu-prof", "--cpu-prof-dir", config.profileDir] : []),
      ],
    },
  };
}

/**
 * The node flags docker-compose.yml passes the split services (the Helm chart's are kept equal
 * by test/unit/start-flags.test.ts), so the bench measures them as deployed.
 */
function splitNodeFlags(): string[] {
  const flags = serviceCommandFlags("docker-compose.yml").get("gateway");
  if (!flags) throw new Error("docker-compose.yml has no gateway command");
  return flags;
}

/**
 * `node dist/apps/all-in-one/main.js` as a child process (the kit's), the throwaway Redis and
 * the bench catalog. A separate process so its VmHWM is the system's own peak memory, and so
 * --cpu-prof profiles only the system.
 */
export async function startSystem(
  config: BenchConfig,
  options: { redisUrl: string; catalogFile: string; env?: NodeJS.ProcessEnv },
): Promise<SystemProcess> {
  const { env, child: bench } = benchChild(config, options);
  // As `npm start` runs it: its node flags first, the bench's own after them (they win).
  const how = { ...bench, nodeArgs: [...npmStartNodeFlags(), ...(bench.nodeArgs ?? [])] };
  const system = await startSystemProcess(options.redisUrl, env, how);
  const { child } = system;
  return {
    child,
    pid: child.pid,
    baseUrl: system.baseUrl(),
    ports: system.ports,
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
 * Railgate as docker-compose runs it, on loopback (the kit's split system): the guardrail and
 * speech services on their gRPC ports, and a gateway that reaches them with the shared
 * service credential.
 */
export async function startSplitSystem(
  config: BenchConfig,
  options: { redisUrl: string; catalogFile: string },
): Promise<SplitSystem> {
  // As docker-compose and the Helm chart run them, the three processes share a PostgreSQL
  // server for the request log and the audit log (PGlite serves one process): a throwaway
  // database on the test server (test/kit/databases.ts finds one, or starts a cluster), migrated
  // by the first process. Its server's CPU is not counted, like Redis's.
  const database = await createTestDatabase("postgres", { migrate: false });
  try {
    const { env, child: bench } = benchChild(config, {
      ...options,
      env: { DATABASE_URL: database.url },
    });
    // As docker-compose runs them: their node flags first, the bench's own after them (they win).
    const how = { ...bench, nodeArgs: [...splitNodeFlags(), ...(bench.nodeArgs ?? [])] };
    const split = await startKitSplitSystem(options.redisUrl, env, how);
    return {
      baseUrl: split.baseUrl(),
      pids: {
        gateway: split.gateway.pid,
        guardrail: split.guardrail.pid,
        speech: split.speech.pid,
      },
      stop: async () => {
        await split.stop();
        await database.dispose();
      },
    };
  } catch (err) {
    await database.dispose();
    throw err;
  }
}
