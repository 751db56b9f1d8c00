import { CLIP_BYTES, UPSTREAM_MODEL } from "../constants.js";
import { type LoadRequest, type LoadResult, warmThenRun } from "../load.js";
import { describe, fmt, signed } from "../table.js";
import { SHORT_INPUT } from "../texts.js";
import { checkClean, progress, type ScenarioContext } from "./context.js";

/** The request body; sent as-is both through the gateway and straight to the upstream. */
export const PROXY_BODY = JSON.stringify({
  model: UPSTREAM_MODEL,
  voice: "alloy",
  input: SHORT_INPUT,
  response_format: "pcm",
});

const TARGET_ADDED_P50_MS = 2;
const TARGET_ADDED_P99_MS = 10;

export function gatewaySpeech(secret: string): LoadRequest[] {
  return [
    {
      method: "POST",
      path: "/api/v1/audio/speech",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: PROXY_BODY,
    },
  ];
}

const DIRECT: LoadRequest[] = [
  {
    method: "POST",
    path: "/v1/audio/speech",
    headers: { "content-type": "application/json" },
    body: PROXY_BODY,
  },
];

/** Every completed response must carry the whole clip, or the run measured something else. */
export function checkClip(id: string, r: LoadResult): void {
  if (r.bodyBytes < r.completed * CLIP_BYTES) {
    throw new Error(
      `${id}: ${r.bodyBytes} body bytes for ${r.completed} responses of ${CLIP_BYTES}`,
    );
  }
}

export async function runSpeech(
  ctx: ScenarioContext,
  id: string,
  origin: string,
  serverPid: number,
  requests: LoadRequest[],
  connections: number,
): Promise<LoadResult> {
  progress(`${id}: ${connections} connection(s)`);
  const r = await warmThenRun(
    {
      origin,
      serverPid,
      label: `${id} c${connections}`,
      connections,
      duration: ctx.config.seconds,
      requests,
    },
    ctx.config.warmupSeconds,
  );
  checkClean(id, r);
  checkClip(id, r);
  return r;
}

/**
 * 2. Speech proxy overhead: the same body through the gateway (auth, gRPC
 * stream through the speech service, routing, metering, upstream fetch,
 * re-streaming) and straight to the loopback upstream. The upstream answers
 * instantly, so the difference is what Railgate adds.
 */
export async function speechProxyScenario(ctx: ScenarioContext): Promise<void> {
  const key = await ctx.api.createKey("bench speech proxy");
  const upstream = `http://127.0.0.1:${ctx.upstreamPort}`;
  const details: Record<string, unknown> = {};
  for (const connections of [1, 50]) {
    const gw = await runSpeech(
      ctx,
      "2 speech via gateway",
      ctx.system.baseUrl,
      ctx.system.pid,
      gatewaySpeech(key.secret),
      connections,
    );
    const rss = ctx.system.peakRssMb();
    const direct = await runSpeech(
      ctx,
      "2 speech direct to upstream",
      upstream,
      ctx.upstreamPid,
      DIRECT,
      connections,
    );
    const addedP50 = gw.ttfbMs.p50 - direct.ttfbMs.p50;
    const addedP99 = gw.ttfbMs.p99 - direct.ttfbMs.p99;
    const judged = connections === 50;
    ctx.report.row({
      scenario: `2 speech proxy c${connections} TTFB`,
      reqPerSec: gw.reqPerSec,
      p50Ms: gw.ttfbMs.p50,
      p99Ms: gw.ttfbMs.p99,
      peakRssMb: rss,
      baseline: describe(direct.reqPerSec, direct.ttfbMs.p50, direct.ttfbMs.p99, "direct TTFB"),
      ratio: gw.reqPerSec / direct.reqPerSec,
      target: judged
        ? `added p50 ${signed(addedP50)} <= ${TARGET_ADDED_P50_MS}, p99 ${signed(addedP99)} <= ${TARGET_ADDED_P99_MS}`
        : `added p50 ${signed(addedP50)}, p99 ${signed(addedP99)} (info)`,
      pass: judged ? addedP50 <= TARGET_ADDED_P50_MS && addedP99 <= TARGET_ADDED_P99_MS : undefined,
    });
    ctx.report.row({
      scenario: `2 speech proxy c${connections} total`,
      reqPerSec: gw.reqPerSec,
      p50Ms: gw.totalMs.p50,
      p99Ms: gw.totalMs.p99,
      peakRssMb: rss,
      baseline: describe(direct.reqPerSec, direct.totalMs.p50, direct.totalMs.p99, "direct total"),
      ratio: gw.reqPerSec / direct.reqPerSec,
      target: `added p50 ${signed(gw.totalMs.p50 - direct.totalMs.p50)} (info)`,
    });
    details[`c${connections}`] = {
      gateway: gw,
      direct,
      addedTtfbMs: { p50: addedP50, p99: addedP99 },
      addedFirstBodyByteMs: {
        p50: gw.firstBodyByteMs.p50 - direct.firstBodyByteMs.p50,
        p99: gw.firstBodyByteMs.p99 - direct.firstBodyByteMs.p99,
      },
      systemPeakRssMb: rss,
    };
    progress(
      `speech proxy c${connections}: added TTFB p50 ${fmt(addedP50)} ms, p99 ${fmt(addedP99)} ms`,
    );
  }
  ctx.report.measurement("speechProxy", {
    clipBytes: CLIP_BYTES,
    inputChars: SHORT_INPUT.length,
    ...details,
  });
}
