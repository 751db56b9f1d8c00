import { join } from "node:path";
import { makeTempDir, removeTempDir } from "../../test/kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../../test/kit/redis-server.js";
import { ManagementApi } from "../api.js";
import { UPSTREAM_MODEL } from "../constants.js";
import { type HelperProcess, startHelper } from "../helper-process.js";
import { type LoadRequest, type LoadResult, runLoad } from "../load.js";
import { ensurePortkeyInstalled, type PortkeyProcess, startPortkey } from "../portkey.js";
import { stopAll } from "../processes.js";
import {
  type SplitSystem,
  type SystemProcess,
  startSplitSystem,
  startSystem,
  writeBenchCatalog,
} from "../system-process.js";
import { fmt, renderGrid } from "../table.js";
import { prose } from "../texts.js";
import { type BaseContext, checkClean, progress } from "./context.js";
import { checkClip } from "./speech-proxy.js";

/**
 * About the length of ../shared/peers' sentence: a short request, so what is
 * measured is the proxying, not the input.
 */
const INPUT = prose(110);
/** OpenAI's name for the model, which the floor and Portkey pass through untouched. */
const PEER_MODEL = "tts-1";

interface Contestant {
  name: string;
  origin: string;
  request: LoadRequest;
  /** Processes whose CPU counts as the contestant's (the split deployment has three). */
  pids: Record<string, number>;
}

/** One contestant at one concurrency. */
export interface PeerRun {
  contestant: string;
  connections: number;
  requests: number;
  reqPerSec: number;
  /** Request written -> first body byte (first audio), ms. */
  ttfbP50Ms: number;
  ttfbP99Ms: number;
  /** TTFB p50 minus the upstream's own (direct) at the same concurrency. */
  addedTtfbP50Ms?: number;
  cpuMsPerRequest: Record<string, number>;
  cpuMsPerRequestTotal: number;
  /** Upstream clips started per request sent (warm-up included); 1.00 for a pass-through. */
  upstreamHitsPerRequest: number;
  foreignCpuCores?: number;
}

/**
 * Targets of the hot path, judged here, never in tests: ratios to the floor
 * (node:http in, undici out) and to Portkey, from the same run.
 */
const TARGETS = {
  /** `npm start`: CPU per request at most this many times the floor's, at 50 and at 1 connection. */
  cpuVsFloorC50: 1.3,
  cpuVsFloorC1: 1.6,
  /** `npm start`: req/s at 50 connections at least this share of the floor's. */
  reqPerSecVsFloorC50: 0.75,
  /** Split: CPU per request summed over its processes, at most this many times the floor's. */
  splitCpuVsFloorC50: 2.2,
  /** Split: added TTFB p50 at 1 connection, at most this share of Portkey's. */
  splitAddedTtfbVsPortkeyC1: 0.8,
};

function speechRequest(
  path: string,
  model: string,
  headers: Record<string, string> = {},
): LoadRequest {
  return {
    method: "POST",
    path,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model, input: INPUT, voice: "alloy", response_format: "pcm" }),
  };
}

async function upstreamServed(upstream: HelperProcess): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${upstream.port}/health`);
  return ((await res.json()) as { served: number }).served;
}

async function measure(
  ctx: BaseContext,
  upstream: HelperProcess,
  c: Contestant,
  connections: number,
): Promise<PeerRun> {
  const id = `peers ${c.name} c${connections}`;
  progress(`${id}: ${ctx.config.peersWarmup} + ${ctx.config.peersRequests} requests`);
  const base = {
    origin: c.origin,
    connections,
    requests: [c.request],
    timeoutSeconds: 30,
  };
  const served0 = await upstreamServed(upstream);
  const warm = await runLoad({ ...base, amount: ctx.config.peersWarmup });
  checkClean(`${id} warm-up`, warm);
  const r: LoadResult = await runLoad({
    ...base,
    amount: ctx.config.peersRequests,
    cpuPids: c.pids,
    label: id,
  });
  checkClean(id, r);
  checkClip(id, r);
  const served1 = await upstreamServed(upstream);
  const cpu = r.cpuMsPerRequestByProcess ?? {};
  return {
    contestant: c.name,
    connections,
    requests: r.completed,
    reqPerSec: r.reqPerSec,
    ttfbP50Ms: r.firstBodyByteMs.p50,
    ttfbP99Ms: r.firstBodyByteMs.p99,
    cpuMsPerRequest: cpu,
    cpuMsPerRequestTotal: Object.values(cpu).reduce((a, b) => a + b, 0),
    upstreamHitsPerRequest: (served1 - served0) / (warm.completed + r.completed),
    foreignCpuCores: r.foreignCpuCores,
  };
}

const x = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? "-" : `${fmt(v)}x`);

/** The side-by-side table: absolute numbers, then ratios to Portkey and to the floor. */
function peersTable(runs: PeerRun[]): string {
  const find = (name: string, c: number) =>
    runs.find((r) => r.contestant === name && r.connections === c);
  const rows = runs.map((r) => {
    const portkey = find("portkey", r.connections);
    const floor = find("floor", r.connections);
    return [
      r.contestant,
      String(r.connections),
      fmt(r.reqPerSec, 0),
      fmt(r.ttfbP50Ms),
      fmt(r.ttfbP99Ms),
      r.addedTtfbP50Ms === undefined ? "-" : fmt(r.addedTtfbP50Ms),
      fmt(r.cpuMsPerRequestTotal),
      Object.keys(r.cpuMsPerRequest).length > 1
        ? Object.entries(r.cpuMsPerRequest)
            .map(([k, v]) => `${k} ${fmt(v)}`)
            .join(" + ")
        : "",
      x(portkey && r.reqPerSec / portkey.reqPerSec),
      x(portkey && r.cpuMsPerRequestTotal / portkey.cpuMsPerRequestTotal),
      x(
        portkey?.addedTtfbP50Ms && r.addedTtfbP50Ms !== undefined
          ? r.addedTtfbP50Ms / portkey.addedTtfbP50Ms
          : undefined,
      ),
      x(floor && r.cpuMsPerRequestTotal / floor.cpuMsPerRequestTotal),
      fmt(r.upstreamHitsPerRequest),
    ];
  });
  return renderGrid(
    [
      "contestant",
      "c",
      "req/s",
      "TTFB p50",
      "TTFB p99",
      "added p50",
      "CPU ms/req",
      "per process",
      "req/s / portkey",
      "CPU / portkey",
      "added / portkey",
      "CPU / floor",
      "upstream hits/req",
    ],
    rows,
  );
}

/**
 * 5. Peers: the same speech request, in the same run, straight to the
 * upstream, through the floor (node:http in, undici out), Portkey 1.15.2, and
 * Railgate as `npm start` runs it (one process, in-process transport) and
 * split (gateway, guardrail, speech processes over gRPC). The upstream serves
 * the 96,000-byte clip in 10 chunks like ../shared/peers, whose run.sh is the
 * referee: both should agree. Everything runs on its own Redis, so no
 * guardrail another scenario set applies (a standard key, no guardrail).
 */
export async function peersScenario(ctx: BaseContext): Promise<void> {
  const portkeyVersion = ensurePortkeyInstalled();
  const dir = makeTempDir("railgate-bench-peers-");
  let redis: ThrowawayRedis | undefined;
  let upstream: HelperProcess | undefined;
  let floor: HelperProcess | undefined;
  let portkey: PortkeyProcess | undefined;
  let railgate: SystemProcess | undefined;
  let split: SplitSystem | undefined;
  try {
    redis = await startRedis();
    upstream = await startHelper("fake-upstream.js", {
      BENCH_UPSTREAM_CHUNK_BYTES: "9600",
      BENCH_UPSTREAM_CHUNK_TURNS: "1",
    });
    const upstreamUrl = `http://127.0.0.1:${upstream.port}/v1`;
    const catalogFile = writeBenchCatalog(dir, upstream.port);
    floor = await startHelper("floor-server.js", { FLOOR_UPSTREAM: upstreamUrl });
    portkey = await startPortkey(join(dir, "portkey.log"));
    progress("peers: starting Railgate (npm start) and Railgate split");
    railgate = await startSystem(ctx.config, { redisUrl: redis.url, catalogFile });
    split = await startSplitSystem(ctx.config, { redisUrl: redis.url, catalogFile });
    ctx.onSystemStarted(railgate.pid);
    for (const pid of Object.values(split.pids)) ctx.onSystemStarted(pid);
    const railgateKey = await new ManagementApi(railgate.baseUrl).createKey("bench peers");
    const splitKey = await new ManagementApi(split.baseUrl).createKey("bench peers split");

    const contestants: Contestant[] = [
      {
        name: "direct",
        origin: `http://127.0.0.1:${upstream.port}`,
        request: speechRequest("/v1/audio/speech", PEER_MODEL),
        pids: { upstream: upstream.child.pid },
      },
      {
        name: "floor",
        origin: `http://127.0.0.1:${floor.port}`,
        request: speechRequest("/v1/audio/speech", PEER_MODEL),
        pids: { floor: floor.child.pid },
      },
      {
        name: "portkey",
        origin: portkey.origin,
        request: speechRequest("/v1/audio/speech", PEER_MODEL, {
          authorization: "Bearer x",
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": upstreamUrl,
        }),
        pids: { portkey: portkey.child.pid },
      },
      {
        name: "railgate",
        origin: railgate.baseUrl,
        request: speechRequest("/api/v1/audio/speech", UPSTREAM_MODEL, {
          authorization: `Bearer ${railgateKey.secret}`,
        }),
        pids: { railgate: railgate.pid },
      },
      {
        name: "railgate split",
        origin: split.baseUrl,
        request: speechRequest("/api/v1/audio/speech", UPSTREAM_MODEL, {
          authorization: `Bearer ${splitKey.secret}`,
        }),
        pids: split.pids,
      },
    ];

    // Concurrency by concurrency, contestant by contestant, like the referee.
    const runs: PeerRun[] = [];
    for (const connections of [1, 50]) {
      for (const c of contestants) runs.push(await measure(ctx, upstream, c, connections));
      const direct = runs.find((r) => r.contestant === "direct" && r.connections === connections);
      for (const r of runs) {
        if (direct && r.connections === connections && r !== direct)
          r.addedTtfbP50Ms = r.ttfbP50Ms - direct.ttfbP50Ms;
      }
    }
    report(ctx, runs);
    ctx.report.measurement("peers", {
      portkeyVersion,
      inputChars: INPUT.length,
      requests: ctx.config.peersRequests,
      warmup: ctx.config.peersWarmup,
      runs,
    });
  } finally {
    // Railgate first: its CPU profiles are written on SIGTERM.
    await Promise.allSettled([railgate?.stop(), split?.stop()]);
    await stopAll([portkey?.child, floor?.child, upstream?.child]);
    await redis?.stop().catch(() => {});
    removeTempDir(dir);
  }
}

function report(ctx: BaseContext, runs: PeerRun[]): void {
  const find = (name: string, c: number) => {
    const r = runs.find((q) => q.contestant === name && q.connections === c);
    if (!r) throw new Error(`peers: no run of ${name} at c=${c}`);
    return r;
  };
  const [rg50, split50, floor50] = ["railgate", "railgate split", "floor"].map((n) =>
    find(n, 50),
  ) as [PeerRun, PeerRun, PeerRun];
  const [rg1, split1, pk1, floor1] = ["railgate", "railgate split", "portkey", "floor"].map((n) =>
    find(n, 1),
  ) as [PeerRun, PeerRun, PeerRun, PeerRun];
  /** One judged row: `ratio` against `limit`, at most (`max`) or at least (`min`). */
  const judge = (
    r: PeerRun,
    baseline: string,
    ratio: number,
    bound: { max: number } | { min: number },
    what: string,
  ) => {
    const limit = "max" in bound ? `<= ${bound.max}x` : `>= ${bound.min}x`;
    ctx.report.row({
      scenario: `5 peers ${r.contestant} c${r.connections}`,
      reqPerSec: r.reqPerSec,
      p50Ms: r.ttfbP50Ms,
      p99Ms: r.ttfbP99Ms,
      baseline,
      ratio,
      target: `${what} ${limit}`,
      pass: "max" in bound ? ratio <= bound.max : ratio >= bound.min,
    });
  };
  const cpu = (r: PeerRun) => `${fmt(r.cpuMsPerRequestTotal)} CPU ms/req`;
  judge(
    rg50,
    `floor ${cpu(floor50)}`,
    rg50.cpuMsPerRequestTotal / floor50.cpuMsPerRequestTotal,
    { max: TARGETS.cpuVsFloorC50 },
    `CPU/req ${fmt(rg50.cpuMsPerRequestTotal)} ms vs floor`,
  );
  judge(
    rg1,
    `floor ${cpu(floor1)}`,
    rg1.cpuMsPerRequestTotal / floor1.cpuMsPerRequestTotal,
    { max: TARGETS.cpuVsFloorC1 },
    `CPU/req ${fmt(rg1.cpuMsPerRequestTotal)} ms vs floor`,
  );
  judge(
    rg50,
    `floor ${fmt(floor50.reqPerSec, 0)} req/s`,
    rg50.reqPerSec / floor50.reqPerSec,
    { min: TARGETS.reqPerSecVsFloorC50 },
    `req/s ${fmt(rg50.reqPerSec, 0)} vs floor`,
  );
  judge(
    split50,
    `floor ${cpu(floor50)}`,
    split50.cpuMsPerRequestTotal / floor50.cpuMsPerRequestTotal,
    { max: TARGETS.splitCpuVsFloorC50 },
    `CPU/req summed ${fmt(split50.cpuMsPerRequestTotal)} ms vs floor`,
  );
  judge(
    split1,
    `portkey added TTFB p50 ${fmt(pk1.addedTtfbP50Ms ?? Number.NaN)} ms`,
    (split1.addedTtfbP50Ms ?? Number.NaN) / (pk1.addedTtfbP50Ms ?? Number.NaN),
    { max: TARGETS.splitAddedTtfbVsPortkeyC1 },
    `added TTFB p50 ${fmt(split1.addedTtfbP50Ms ?? Number.NaN)} ms vs portkey`,
  );
  ctx.report.table(
    `Peers (same requests, same run; TTFB = first body byte, ms; CPU = all threads, from /proc)\n${peersTable(runs)}`,
  );
}
