import type { AudioFormatName } from "../../domain/audio-formats.js";
import { ESPEAK_MODEL } from "../../test/kit/catalog-entries.js";
import { ManagementApi } from "../api.js";
import { PCM_BYTES_PER_SECOND } from "../constants.js";
import { type LoadRequest, type LoadResult, runLoad, warmThenRun } from "../load.js";
import { startSystem } from "../system-process.js";
import { fmt } from "../table.js";
import { LONG_INPUT } from "../texts.js";
import { type BaseContext, checkClean, progress, type ScenarioContext } from "./context.js";

const TARGET_FIRST_BYTE_P50_MS = 50;
const TARGET_AUDIO_PER_WALL_SECOND = 100;
const TARGET_RSS_MB = 300;
const MEMORY_STREAMS = 50;
/** A 2,000-character synthesis under full load can take long; never cut it at autocannon's 10 s. */
const TIMEOUT_SECONDS = 300;

type Format = AudioFormatName;

/**
 * Formats timed one request after another. Opus, AAC and FLAC are encoded from the engine's PCM
 * in the main process (AAC and FLAC each in a worker thread started per stream): their first
 * byte carries that start-up.
 */
const SEQUENTIAL_FORMATS: readonly Format[] = ["mp3", "pcm", "opus", "aac", "flac"];

function speech(secret: string, format: Format): LoadRequest {
  return {
    method: "POST",
    path: "/api/v1/audio/speech",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({
      model: ESPEAK_MODEL,
      voice: "en-us",
      input: LONG_INPUT,
      response_format: format,
    }),
  };
}

/**
 * 3a/3b. The embedded eSpeak engine on a 2,000-character text: latency of
 * single requests one after another (nothing else running), in each format it
 * encodes itself (wav is pcm behind a header), then throughput
 * with every core busy (cores x 2 streams), counted in audio seconds produced
 * per wall second (PCM body bytes / 48,000, streams cut at the end included).
 */
export async function embeddedEngineScenario(ctx: ScenarioContext): Promise<void> {
  const key = await ctx.api.createKey("bench embedded engine");
  const details: Record<string, unknown> = { inputChars: LONG_INPUT.length };

  for (const format of SEQUENTIAL_FORMATS) {
    progress(`engine: ${ctx.config.engineSamples} sequential ${format} requests`);
    const r = await warmThenRun(
      {
        origin: ctx.system.baseUrl,
        serverPid: ctx.system.pid,
        label: `3 espeak ${format} c1`,
        connections: 1,
        amount: ctx.config.engineSamples,
        timeoutSeconds: TIMEOUT_SECONDS,
        requests: [speech(key.secret, format)],
      },
      ctx.config.warmupSeconds,
    );
    checkClean(`engine ${format}`, r);
    const rss = ctx.system.peakRssMb();
    // The target is judged on the first audio byte: headers alone could go out before any audio exists.
    const firstAudio = r.firstBodyByteMs;
    ctx.report.row({
      scenario: `3 espeak ${format} 2000ch c1 TTFB`,
      reqPerSec: r.reqPerSec,
      p50Ms: r.ttfbMs.p50,
      p99Ms: r.ttfbMs.p99,
      peakRssMb: rss,
      baseline: `first audio byte p50 ${fmt(firstAudio.p50)} / p99 ${fmt(firstAudio.p99)} ms`,
      target: `first byte p50 <= ${TARGET_FIRST_BYTE_P50_MS} (audio ${fmt(firstAudio.p50)})`,
      pass: r.ttfbMs.p50 <= TARGET_FIRST_BYTE_P50_MS && firstAudio.p50 <= TARGET_FIRST_BYTE_P50_MS,
    });
    ctx.report.row({
      scenario: `3 espeak ${format} 2000ch c1 total`,
      reqPerSec: r.reqPerSec,
      p50Ms: r.totalMs.p50,
      p99Ms: r.totalMs.p99,
      peakRssMb: rss,
      target:
        format === "pcm"
          ? `audio ${fmt(audioSeconds(r) / r.completed, 1)} s per response (info)`
          : "(info)",
    });
    details[`sequential-${format}`] = { ...r, peakRssMb: rss };
  }

  const connections = ctx.config.cores * 2;
  progress(`engine: throughput, ${connections} concurrent pcm streams`);
  const t = await warmThenRun(
    {
      origin: ctx.system.baseUrl,
      serverPid: ctx.system.pid,
      label: `3 espeak pcm throughput c${connections}`,
      connections,
      duration: Math.max(ctx.config.seconds, 5),
      timeoutSeconds: TIMEOUT_SECONDS,
      requests: [speech(key.secret, "pcm")],
    },
    ctx.config.warmupSeconds,
  );
  // Streams still running when the clock stops are cut off by design; errors are not allowed.
  if (t.non2xx + t.errors > 0 || t.bodyBytes === 0) checkClean("engine throughput", t);
  const perWallSecond = audioSeconds(t) / t.durationSeconds;
  const rss = ctx.system.peakRssMb();
  ctx.report.row({
    scenario: `3 espeak pcm c${connections} throughput TTFB`,
    reqPerSec: t.reqPerSec,
    p50Ms: t.ttfbMs.p50,
    p99Ms: t.ttfbMs.p99,
    peakRssMb: rss,
    baseline: `${fmt(audioSeconds(t), 0)} audio s in ${fmt(t.durationSeconds, 1)} s`,
    target: `>= ${TARGET_AUDIO_PER_WALL_SECOND} audio s/s (got ${fmt(perWallSecond, 1)})`,
    pass: perWallSecond >= TARGET_AUDIO_PER_WALL_SECOND,
  });
  details.throughput = {
    ...t,
    connections,
    audioSeconds: audioSeconds(t),
    audioSecondsPerWallSecond: perWallSecond,
    peakRssMb: rss,
  };
  ctx.report.measurement("embeddedEngine", details);
}

function audioSeconds(r: LoadResult): number {
  return r.bodyBytes / PCM_BYTES_PER_SECOND;
}

/**
 * 3c. Peak memory with 50 concurrent 2,000-character streams, in a system
 * process of its own (VmHWM cannot be reset, so the main process's earlier
 * peaks would hide this one). Half the streams are mp3 (an encoder per
 * stream), half pcm. Its own Redis prefix keeps the other scenarios'
 * guardrails out of its way.
 */
export async function engineMemoryScenario(ctx: BaseContext): Promise<void> {
  progress(`engine memory: fresh system, ${MEMORY_STREAMS} concurrent long streams`);
  const system = await startSystem(ctx.config, {
    redisUrl: ctx.redisUrl,
    catalogFile: ctx.catalogFile,
    env: { RAILGATE_REDIS_PREFIX: "rgbenchmem" },
  });
  ctx.onSystemStarted(system.pid);
  try {
    const idleRss = system.peakRssMb();
    const api = new ManagementApi(system.baseUrl);
    const key = await api.createKey("bench memory");
    // Longer than the other runs: every stream must be under way at once before the peak counts.
    const duration = Math.max(ctx.config.seconds * 2, 10);
    const r = await runLoad({
      origin: system.baseUrl,
      serverPid: system.pid,
      label: `3 espeak memory c${MEMORY_STREAMS}`,
      connections: MEMORY_STREAMS,
      duration,
      timeoutSeconds: TIMEOUT_SECONDS,
      requests: (i) => [speech(key.secret, i % 2 === 0 ? "pcm" : "mp3")],
    });
    if (r.non2xx + r.errors > 0) checkClean("engine memory", r);
    const peak = system.peakRssMb();
    ctx.report.row({
      scenario: `3 espeak ${MEMORY_STREAMS} streams pcm+mp3 peak RSS`,
      reqPerSec: r.reqPerSec,
      p50Ms: r.ttfbMs.p50,
      p99Ms: r.ttfbMs.p99,
      peakRssMb: peak,
      baseline: `idle after start ${fmt(idleRss ?? Number.NaN, 0)} MB`,
      target: `peak RSS <= ${TARGET_RSS_MB} MB`,
      pass: peak !== undefined && peak <= TARGET_RSS_MB,
    });
    ctx.report.measurement("engineMemory", {
      streams: MEMORY_STREAMS,
      duration,
      idleRssMb: idleRss,
      peakRssMb: peak,
      load: r,
    });
  } finally {
    await system.stop();
  }
}
