import { createHash, randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { FilterAction, Region } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  AudioFormat,
  type Generation,
  GenerationSchema,
  GenerationStatus,
} from "../../gen/railgate/speech/v1/speech_pb.js";
import { BatchWriter } from "../../store/request-log/batch-writer.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { openDatabase } from "../../store/request-log/open-database.js";
import { createTestDatabase, type TestDatabase } from "../../test/kit/databases.js";
import { makeTempDir, removeTempDir } from "../../test/kit/processes.js";
import { ManagementApi } from "../api.js";
import { MANAGEMENT_KEY, UPSTREAM_MODEL } from "../constants.js";
import { runLoad } from "../load.js";
import { summarize } from "../stats.js";
import { type SystemProcess, startSystem } from "../system-process.js";
import { prose } from "../texts.js";
import { type BaseContext, checkClean, progress } from "./context.js";

const DAY = 86_400_000;
/** The target of the issue: a list page answers in under 100 ms at p95 with 1,000,000 records. */
const TARGET_P95_MS = 100;

function rowsWanted(): number {
  const raw = process.env.BENCH_LOG_ROWS;
  const n = raw ? Number(raw) : 1_000_000;
  if (!Number.isSafeInteger(n) || n < 1_000)
    throw new Error(`BENCH_LOG_ROWS must be >= 1000, got ${raw}`);
  return n;
}

/** A deployment's worth of variety: 20 workspaces, 200 keys, 30 guardrails, 5 models, 29 days. */
function world() {
  const workspaces = Array.from({ length: 20 }, () => randomUUID());
  const keys = Array.from({ length: 200 }, (_, i) => ({
    hash: createHash("sha256").update(`bench-key-${i}`).digest("hex"),
    ws: workspaces[i % workspaces.length] as string,
  }));
  const guardrails = Array.from({ length: 30 }, () => randomUUID());
  const models = ["acme/voice-a", "acme/voice-b", "other/voice", "railgate/espeak", "open/tts-1"];
  const providers = ["acme", "other", "railgate"];
  return { workspaces, keys, guardrails, models, providers };
}

type World = ReturnType<typeof world>;

/** Record i of the run: what a real speech request logs, without a trace (bytes per record). */
function record(w: World, i: number, rows: number, now: number): Generation {
  const key = w.keys[(i * 7919) % w.keys.length] as World["keys"][number];
  const roll = (i * 2654435761) % 1000;
  const status =
    roll < 900
      ? GenerationStatus.COMPLETED
      : roll < 950
        ? GenerationStatus.REFUSED
        : roll < 980
          ? GenerationStatus.FAILED
          : GenerationStatus.CANCELLED;
  const refused = status === GenerationStatus.REFUSED;
  const guardrail = w.guardrails[i % w.guardrails.length] as string;
  const acted = (slug: string, label: string, action: FilterAction, count: number) => [
    { slug, label, action, count, guardrailId: guardrail },
  ];
  const outcomes = refused
    ? acted("email", "[EMAIL]", FilterAction.BLOCK, 1)
    : roll % 10 === 0
      ? acted("phone", "[PHONE]", FilterAction.REDACT, 2)
      : roll % 10 === 1
        ? acted("custom", "SECRET", FilterAction.FLAG, 1)
        : [];
  return create(GenerationSchema, {
    id: `gen-${randomUUID()}`,
    model: w.models[i % w.models.length],
    provider: refused ? "" : w.providers[i % w.providers.length],
    characters: 40 + (i % 400),
    costUsd: refused ? 0 : (40 + (i % 400)) * 0.000015,
    format: AudioFormat.MP3,
    durationSeconds: 2.5,
    sessionId: i % 4 === 0 ? `sess-${i % 1000}` : "",
    user: i % 5 === 0 ? `user-${i % 300}` : "",
    filterOutcomes: outcomes,
    keyHash: key.hash,
    workspaceId: key.ws,
    status,
    refusalReason: refused ? "content_blocked" : "",
    guardrailId: outcomes.length > 0 ? guardrail : "",
    bytes: 40_000n,
    timeToFirstByteMs: refused ? 0 : 80 + (i % 200),
    voice: "alloy",
    speed: 1,
    dataRegion: Region.GLOBAL,
    // Spread over the last 29 days (inside the 30-day retention), newest last.
    createdAt: timestampFromMs(now - 29 * DAY + Math.floor((i / rows) * 29 * DAY)),
  });
}

interface Loaded {
  seconds: number;
  perSecond: number;
  cpuMicrosPerRecord: number;
}

/** Writes `rows` records through the request log's own writer; throughput and this process's CPU. */
async function load(db: SqlDatabase, w: World, rows: number, now: number): Promise<Loaded> {
  const records = new GenerationRecords(db);
  const writer = new BatchWriter<Generation>({
    name: "bench",
    write: (batch) => records.insert(batch),
    maxBatch: 500,
    queueLimit: 20_000,
  });
  // Records are made ahead, 10,000 at a time, outside the measurement: the speech service has
  // its record already; what the writer adds is add(), batching, encoding and the database client.
  const chunk = 10_000;
  let seconds = 0;
  let cpuMicros = 0;
  for (let from = 0; from < rows; from += chunk) {
    const made = Array.from({ length: Math.min(chunk, rows - from) }, (_, j) =>
      record(w, from + j, rows, now),
    );
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (const r of made) writer.add(r);
    await writer.flush();
    seconds += (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    cpuMicros += used.user + used.system;
    if ((from + chunk) % 100_000 === 0) progress(`  ${from + chunk} records`);
  }
  await writer.close();
  if (writer.stats.dropped > 0)
    throw new Error(`the writer dropped ${writer.stats.dropped} records`);
  return {
    seconds,
    perSecond: rows / seconds,
    cpuMicrosPerRecord: cpuMicros / rows,
  };
}

interface Sizes {
  totalBytesPerRecord: number;
  heapBytesPerRecord: number;
  avgRowBytes: number;
  avgRecordColumnBytes: number;
}

/** Disk per record: partitions with their indexes and TOAST, the heap alone, and one row's bytes. */
async function sizes(db: SqlDatabase, rows: number): Promise<Sizes> {
  const [all] = await db.query<{ total: number; heap: number }>(
    `SELECT sum(pg_total_relation_size(c.oid))::int8 AS total, sum(pg_relation_size(c.oid))::int8 AS heap
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = 'generations'::regclass`,
  );
  const [row] = await db.query<{ avg_row: number; avg_record: number }>(
    `SELECT avg(pg_column_size(g.*))::float8 AS avg_row, avg(pg_column_size(g.record))::float8 AS avg_record
       FROM (SELECT * FROM generations WHERE trace IS NULL LIMIT 20000) g`,
  );
  return {
    totalBytesPerRecord: Number(all?.total) / rows,
    heapBytesPerRecord: Number(all?.heap) / rows,
    avgRowBytes: Number(row?.avg_row),
    avgRecordColumnBytes: Number(row?.avg_record),
  };
}

/** GET /api/v1/generations over HTTP with the management key, shape by shape, one connection. */
async function listLatency(system: SystemProcess, w: World, now: number, perShape: number) {
  const get = async (query: string) => {
    const t = performance.now();
    const res = await fetch(`${system.baseUrl}/api/v1/generations${query}`, {
      headers: { authorization: `Bearer ${MANAGEMENT_KEY}` },
    });
    const body = (await res.json()) as { data?: unknown[]; next_cursor?: string | null };
    const ms = performance.now() - t;
    if (res.status !== 200)
      throw new Error(`GET /generations${query}: ${res.status} ${JSON.stringify(body)}`);
    return { ms, body };
  };
  const ws = w.workspaces[3] as string;
  const key = w.keys[17]?.hash as string;
  // A cursor five pages deep into one workspace, as a person paging back would hold.
  let cursor = "";
  for (let page = 0; page < 5; page++) {
    const { body } = await get(
      `?workspace_id=${ws}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    cursor = body.next_cursor ?? "";
  }
  const day = new Date(now - 10 * DAY);
  const shapes: [string, string][] = [
    ["every workspace, newest", ""],
    ["one workspace", `?workspace_id=${ws}`],
    ["one workspace, page 6", `?workspace_id=${ws}&cursor=${encodeURIComponent(cursor)}`],
    ["one key", `?key_hash=${key}`],
    ["status=refused", "?status=refused"],
    ["outcome=blocked, one workspace", `?outcome=blocked&workspace_id=${ws}`],
    ["one guardrail", `?guardrail_id=${w.guardrails[5]}`],
    [
      "model, one workspace",
      `?model=${encodeURIComponent(w.models[2] as string)}&workspace_id=${ws}`,
    ],
    [
      "one day's window",
      `?from=${day.toISOString()}&to=${new Date(day.getTime() + DAY).toISOString()}`,
    ],
    ["status=failed, provider=other", "?status=failed&provider=other"],
    ["limit=100, one workspace", `?workspace_id=${ws}&limit=100`],
  ];
  // Warm-up: the first queries of a shape plan it and read its pages from disk (PGlite keeps
  // its files in memory once read); five rounds, not measured.
  for (let round = 0; round < 5; round++) for (const [, q] of shapes) await get(q);
  const all: number[] = [];
  const byShape: Record<string, ReturnType<typeof summarize> & { p95: number }> = {};
  for (const [name, q] of shapes) {
    const times: number[] = [];
    for (let i = 0; i < perShape; i++) times.push((await get(q)).ms);
    all.push(...times);
    byShape[name] = { ...summarize(times), p95: p95(times) };
  }
  return { overall: { ...summarize(all), p95: p95(all) }, byShape };
}

function p95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(0.95 * sorted.length) - 1)] as number;
}

/**
 * What the request log costs a speech request, in the peers scenario's loop (the same short
 * request through the bench's loopback upstream, 50 connections): the system process's CPU per
 * request with the writer on (against a PostgreSQL server, and with the embedded PGlite in the
 * process) and off (RAILGATE_REQUEST_LOG_QUEUE_MAX=1: add() drops every record but the odd one, so
 * nothing is encoded or written).
 */
async function writerCpuPerRequest(base: BaseContext) {
  const variants: { name: string; env: (url: string) => NodeJS.ProcessEnv }[] = [
    { name: "off", env: (url) => ({ RAILGATE_REQUEST_LOG_QUEUE_MAX: "1", DATABASE_URL: url }) },
    { name: "on, PostgreSQL", env: (url) => ({ DATABASE_URL: url }) },
    { name: "on, embedded PGlite", env: () => ({}) },
  ];
  const input = prose(110);
  const running: {
    name: string;
    test: TestDatabase;
    system?: SystemProcess;
    load?: Parameters<typeof runLoad>[0];
    us: number[];
  }[] = [];
  try {
    for (const v of variants) {
      const entry: (typeof running)[number] = {
        name: v.name,
        test: await createTestDatabase("postgres"),
        us: [],
      };
      running.push(entry);
      entry.system = await startSystem(base.config, {
        redisUrl: base.redisUrl,
        catalogFile: base.catalogFile,
        env: v.env(entry.test.url as string),
      });
      base.onSystemStarted(entry.system.pid);
      const key = await new ManagementApi(entry.system.baseUrl).createKey(`log cpu ${v.name}`);
      entry.load = {
        origin: entry.system.baseUrl,
        connections: 50,
        timeoutSeconds: 30,
        requests: [
          {
            method: "POST" as const,
            path: "/api/v1/audio/speech",
            headers: { "content-type": "application/json", authorization: `Bearer ${key.secret}` },
            body: JSON.stringify({
              model: UPSTREAM_MODEL,
              input,
              voice: "alloy",
              response_format: "pcm",
            }),
          },
        ],
      };
      progress(`request log writer ${v.name}: warm-up, ${base.config.peersWarmup} requests`);
      checkClean(
        `log cpu ${v.name} warm-up`,
        await runLoad({ ...entry.load, amount: base.config.peersWarmup }),
      );
    }
    // Rounds alternate between the variants, so a burst of load from elsewhere on the machine
    // lands on all of them rather than on one; the median of the rounds is reported.
    for (let round = 0; round < 3; round++) {
      for (const e of running) {
        if (!e.load || !e.system) continue;
        const r = await runLoad({
          ...e.load,
          amount: base.config.peersRequests,
          cpuPids: { railgate: e.system.pid },
          label: `request log writer ${e.name} round ${round + 1}`,
        });
        checkClean(`log cpu ${e.name}`, r);
        e.us.push((r.cpuMsPerRequestByProcess?.railgate ?? Number.NaN) * 1000);
      }
    }
  } finally {
    for (const e of running) {
      await e.system?.stop();
      await e.test.dispose();
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
  return Object.fromEntries(running.map((e) => [e.name, { median: median(e.us), rounds: e.us }]));
}

/**
 * The request log at scale, on both stores: 1,000,000 records (BENCH_LOG_ROWS) written through
 * the request log's batched writer (throughput, and this process's CPU per record: what the
 * writer costs the speech process), bytes per record, then the list's latency over HTTP
 * through a real system on that database (target: p95 < 100 ms).
 */
export async function requestLogScenario(base: BaseContext): Promise<void> {
  const rows = rowsWanted();
  const now = Date.now();
  const w = world();
  const lines: string[] = [
    `request log, ${rows.toLocaleString("en")} records (bench/scenarios/request-log.ts)`,
    "store      | insert/s | writer CPU us/record | bytes/record (table+indexes) | heap bytes/record | avg row bytes | list p50 ms | list p95 ms",
  ];
  for (const kind of ["postgres", "embedded"] as const) {
    progress(`request log on ${kind}: writing ${rows} records`);
    let test: TestDatabase | undefined;
    let dir: string | undefined;
    let system: SystemProcess | undefined;
    try {
      let db: SqlDatabase;
      if (kind === "postgres") {
        test = await createTestDatabase("postgres");
        db = test.db;
      } else {
        // The default of `npm start`: PGlite, file-backed in the data folder.
        dir = makeTempDir("railgate-bench-log-");
        db = await openDatabase({ dataDir: dir, databasePoolMax: 1 });
      }
      const loaded = await load(db, w, rows, now);
      await db.query("ANALYZE generations");
      const size = await sizes(db, rows);
      // PGlite is one process's database: the system opens the same folder once this one is closed.
      if (kind === "embedded") await db.close();
      progress(`request log on ${kind}: list latency over HTTP`);
      system = await startSystem(base.config, {
        redisUrl: base.redisUrl,
        catalogFile: base.catalogFile,
        env: kind === "postgres" ? { DATABASE_URL: test?.url } : { RAILGATE_DATA_DIR: dir },
      });
      base.onSystemStarted(system.pid);
      const latency = await listLatency(system, w, now, 30);
      base.report.measurement(`request-log-${kind}`, { rows, loaded, size, latency });
      base.report.row({
        scenario: `request log list, ${rows.toLocaleString("en")} records (${kind})`,
        p50Ms: latency.overall.p50,
        p99Ms: latency.overall.p99,
        target: `p95 < ${TARGET_P95_MS} ms (${latency.overall.p95.toFixed(1)} ms)`,
        pass: latency.overall.p95 < TARGET_P95_MS,
      });
      lines.push(
        `${kind.padEnd(10)} | ${loaded.perSecond.toFixed(0).padStart(8)} | ${loaded.cpuMicrosPerRecord.toFixed(1).padStart(20)} | ${size.totalBytesPerRecord.toFixed(0).padStart(28)} | ${size.heapBytesPerRecord.toFixed(0).padStart(17)} | ${size.avgRowBytes.toFixed(0).padStart(13)} | ${latency.overall.p50.toFixed(2).padStart(11)} | ${latency.overall.p95.toFixed(2).padStart(11)}`,
      );
      for (const [name, s] of Object.entries(latency.byShape)) {
        lines.push(
          `    ${kind} ${name}: p50 ${s.p50.toFixed(2)} ms, p95 ${s.p95.toFixed(2)} ms, max ${s.max.toFixed(2)} ms`,
        );
      }
    } finally {
      await system?.stop();
      await test?.dispose();
      if (dir) removeTempDir(dir);
    }
  }
  const cpuRounds = await writerCpuPerRequest(base);
  base.report.measurement("request-log-writer-cpu", cpuRounds);
  const cpu = Object.fromEntries(Object.entries(cpuRounds).map(([k, v]) => [k, v.median]));
  const off = cpu.off ?? Number.NaN;
  lines.push(
    "",
    "system CPU per speech request (us, median of 3 rounds), peers loop, 50 connections:",
  );
  for (const [name, us] of Object.entries(cpu)) {
    lines.push(
      `    writer ${name}: ${us.toFixed(0)} us${name === "off" ? "" : ` (${us - off >= 0 ? "+" : ""}${(us - off).toFixed(0)} us)`}`,
    );
  }
  const added = (cpu["on, PostgreSQL"] ?? Number.NaN) - off;
  base.report.row({
    scenario: "request log writer CPU per request (PostgreSQL)",
    baseline: `writer off ${off.toFixed(0)} us`,
    target: `<= +50 us (${added >= 0 ? "+" : ""}${added.toFixed(0)} us)`,
    pass: added <= 50,
  });
  base.report.table(lines.join("\n"));
}
