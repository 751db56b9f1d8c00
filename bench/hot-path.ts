import type { Redis } from "ioredis";
import { BUILTIN_SLUGS } from "../domain/builtin-filters.js";
import { makeTempDir, removeTempDir } from "../test/kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../test/kit/redis-server.js";
import { ManagementApi } from "./api.js";
import { loadBenchConfig } from "./config.js";
import { UPSTREAM_MODEL } from "./constants.js";
import { type HelperProcess, startHelper } from "./helper-process.js";
import { runLoad } from "./load.js";
import { stopAll } from "./processes.js";
import { summarizeProfiles } from "./profile-windows.js";
import {
  type SplitSystem,
  type SystemProcess,
  startSplitSystem,
  startSystem,
  writeBenchCatalog,
} from "./system-process.js";
import { prose } from "./texts.js";

/**
 * What the speech hot path costs Redis and the process, per request:
 * `node dist/bench/hot-path.js` (after a build) runs `npm start`'s process on
 * a throwaway Redis against the peers' chunked upstream, with a standard key
 * (rate limit and credits unmetered, as in scenario 5), and prints per
 * concurrency: the process's CPU ms per request, Redis's own CPU ms per
 * request, and the scripts (EVALSHA and EVAL calls) and bytes Redis received
 * per request. Not part of `npm run bench`: it isolates the store's share.
 * HOT_PATH_REQUESTS (1500) measured after HOT_PATH_WARMUP (1000), at
 * HOT_PATH_CONNECTIONS (1,50); BENCH_NODE_ARGS and BENCH_CPU_PROF apply.
 * HOT_PATH_TOPOLOGY=split runs the split deployment instead (gateway, guardrail and speech
 * processes over gRPC, as the peers scenario starts them) and prints each process's CPU ms
 * per request and their sum; HOT_PATH_SYSTEM_ENV applies to the one-process system only.
 * HOT_PATH_SYSTEM_ENV adds settings to the system's environment, e.g.
 * `RAILGATE_REQUEST_LOG_QUEUE_MAX=1` (the request log off) or `DATABASE_URL=postgres://...`,
 * separated by spaces, to compare one setting's cost.
 * HOT_PATH_GUARDRAIL=live assigns the key a guardrail with the card and email redactions;
 * HOT_PATH_GUARDRAIL=shadow also runs a shadow of it that adds every other builtin, so the pair
 * measures what a running shadow costs a request (with the filter work it adds), and
 * HOT_PATH_GUARDRAIL=shadow-rules a shadow that changes only the allowed regions (the shadow's
 * own cost: its rules decided again, the live filters' result taken as it is).
 * HOT_PATH_REPLAY_DATA=detections (or encrypted_input, with RAILGATE_REPLAY_DATA_KEY in
 * HOT_PATH_SYSTEM_ENV) sets the default workspace's replay_data, against none by default: the
 * pair measures what a workspace's replay data costs a request.
 */
const INPUT = prose(110);

/** HOT_PATH_GUARDRAIL: none (the default), live, shadow or shadow-rules (see above). */
async function governKey(api: ManagementApi, keyHash: string): Promise<void> {
  const mode = process.env.HOT_PATH_GUARDRAIL ?? "none";
  if (mode === "none") return;
  if (mode !== "live" && mode !== "shadow" && mode !== "shadow-rules")
    throw new Error(`HOT_PATH_GUARDRAIL: "${mode}" is not none, live, shadow or shadow-rules`);
  const redact = (slug: string) => ({ slug, action: "redact" });
  const id = await api.createGuardrail({
    name: "bench hot path",
    content_filter_builtins: ["credit-card", "email"].map(redact),
  });
  await api.assignKeys(id, [keyHash]);
  if (mode !== "live") {
    const change =
      mode === "shadow"
        ? { content_filter_builtins: BUILTIN_SLUGS.map(redact) }
        : { allowed_data_regions: ["global", "europe", "us"] };
    await api.call("POST", `/guardrails/${id}/shadow`, {
      change,
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    });
  }
}

/** HOT_PATH_REPLAY_DATA: the default workspace's (the key's) replay_data. */
async function keepReplayData(api: ManagementApi): Promise<void> {
  const mode = process.env.HOT_PATH_REPLAY_DATA ?? "none";
  if (mode === "none") return;
  const list = await api.call<{ data: { id: string; is_default: boolean }[] }>(
    "GET",
    "/workspaces",
  );
  const ws = list.data.find((w) => w.is_default);
  if (!ws) throw new Error("HOT_PATH_REPLAY_DATA: no default workspace");
  await api.call("PATCH", `/workspaces/${ws.id}`, { replay_data: mode });
}

function envNumber(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  return Number.isFinite(v) && v > 0 ? v : fallback;
}

interface RedisCounters {
  scripts: number;
  inputBytes: number;
  cpuMs: number;
}

async function redisCounters(client: Redis): Promise<RedisCounters> {
  const info = await client.info("all");
  const field = (name: string) => {
    const m = new RegExp(`^${name}:([^\\r\\n]+)`, "m").exec(info);
    return m ? (m[1] as string) : "";
  };
  const calls = (cmd: string) => {
    const m = new RegExp(`^cmdstat_${cmd}:calls=(\\d+)`, "m").exec(info);
    return m ? Number(m[1]) : 0;
  };
  return {
    scripts: calls("evalsha") + calls("eval"),
    inputBytes: Number(field("total_net_input_bytes")),
    cpuMs: (Number(field("used_cpu_user")) + Number(field("used_cpu_sys"))) * 1000,
  };
}

/** HOT_PATH_SYSTEM_ENV: `NAME=value` pairs separated by spaces. */
function systemEnv(): Record<string, string> {
  const pairs = (process.env.HOT_PATH_SYSTEM_ENV ?? "").split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((p) => {
      const eq = p.indexOf("=");
      if (eq <= 0) throw new Error(`HOT_PATH_SYSTEM_ENV: "${p}" is not NAME=value`);
      return [p.slice(0, eq), p.slice(eq + 1)];
    }),
  );
}

async function main(): Promise<void> {
  const config = loadBenchConfig();
  const requests = envNumber("HOT_PATH_REQUESTS", 1_500);
  const warmup = envNumber("HOT_PATH_WARMUP", 1_000);
  const connectionsList = (process.env.HOT_PATH_CONNECTIONS ?? "1,50")
    .split(",")
    .map(Number)
    .filter((n) => n > 0);
  const dir = makeTempDir("railgate-bench-hot-path-");
  let redis: ThrowawayRedis | undefined;
  let upstream: HelperProcess | undefined;
  let system: SystemProcess | undefined;
  let split: SplitSystem | undefined;
  let probe: Redis | undefined;
  let pids: Record<string, number> = {};
  try {
    redis = await startRedis();
    probe = redis.client();
    upstream = await startHelper("fake-upstream.js", {
      BENCH_UPSTREAM_CHUNK_BYTES: "9600",
      BENCH_UPSTREAM_CHUNK_TURNS: "1",
    });
    const catalogFile = writeBenchCatalog(dir, upstream.port);
    let origin: string;
    if (process.env.HOT_PATH_TOPOLOGY === "split") {
      split = await startSplitSystem(config, { redisUrl: redis.url, catalogFile });
      origin = split.baseUrl;
      pids = split.pids;
    } else {
      system = await startSystem(config, { redisUrl: redis.url, catalogFile, env: systemEnv() });
      origin = system.baseUrl;
      pids = { railgate: system.pid };
    }
    const api = new ManagementApi(origin);
    const key = await api.createKey("bench hot path");
    await governKey(api, key.hash);
    await keepReplayData(api);
    const base = {
      origin,
      requests: [
        {
          method: "POST" as const,
          path: "/api/v1/audio/speech",
          headers: { "content-type": "application/json", authorization: `Bearer ${key.secret}` },
          body: JSON.stringify({
            model: UPSTREAM_MODEL,
            input: INPUT,
            voice: "alloy",
            response_format: "pcm",
          }),
        },
      ],
      timeoutSeconds: 30,
    };
    const rows: string[] = [];
    for (const connections of connectionsList) {
      await runLoad({ ...base, connections, amount: warmup });
      const before = await redisCounters(probe);
      const r = await runLoad({
        ...base,
        connections,
        amount: requests,
        cpuPids: pids,
        label: `hot-path c${connections}`,
      });
      const after = await redisCounters(probe);
      const n = r.completed;
      if (r.non2xx + r.errors > 0) throw new Error(`c${connections}: ${r.sampleError}`);
      rows.push(
        [
          `c=${connections}`,
          `${r.reqPerSec.toFixed(0)} req/s`,
          ...Object.keys(pids).map(
            (name) =>
              `${name} ${(r.cpuMsPerRequestByProcess?.[name] ?? Number.NaN).toFixed(3)} CPU ms/req`,
          ),
          ...(Object.keys(pids).length > 1
            ? [
                `summed ${Object.values(r.cpuMsPerRequestByProcess ?? {})
                  .reduce((sum, ms) => sum + ms, 0)
                  .toFixed(3)}`,
              ]
            : []),
          `redis ${((after.cpuMs - before.cpuMs) / n).toFixed(3)} CPU ms/req`,
          `${((after.scripts - before.scripts) / n).toFixed(2)} scripts/req`,
          `${((after.inputBytes - before.inputBytes) / n).toFixed(0)} B in/req`,
          `foreign ${(r.foreignCpuCores ?? 0).toFixed(2)} cores`,
          `first byte p50 ${r.firstBodyByteMs.p50.toFixed(3)} ms`,
        ].join("  "),
      );
    }
    process.stdout.write(`${rows.join("\n")}\n`);
  } finally {
    probe?.disconnect();
    await system?.stop();
    await split?.stop();
    await stopAll([upstream?.child]);
    await redis?.stop();
    removeTempDir(dir);
  }
  // The children wrote their profiles when they stopped.
  if (config.cpuProf) summarizeProfiles(config.profileDir, Object.values(pids));
}

await main();
