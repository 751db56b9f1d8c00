import { UPSTREAM_MODEL } from "../constants.js";
import { type HelperProcess, startHelper } from "../helper-process.js";
import type { LoadRequest } from "../load.js";
import { describe, fmt } from "../table.js";
import { progress, type ScenarioContext } from "./context.js";
import { gatewaySpeech, PROXY_BODY, runSpeech } from "./speech-proxy.js";

/** The goals for a hit: judged here, never in tests. */
const TARGET_HIT_TTFB_P50_MS = 2;
const TARGET_REQ_PER_SEC_VS_FLOOR = 1;

/** The floor is told the same body: the same clip, proxied with nothing but node:http and undici. */
const FLOOR: LoadRequest[] = [
  {
    method: "POST",
    path: "/v1/audio/speech",
    headers: { "content-type": "application/json" },
    body: PROXY_BODY,
  },
];

/**
 * 9. Audio cache: scenario 2's clip (`${UPSTREAM_MODEL}`, same body) from an opted-in workspace,
 * primed once, so every measured request is a hit (Redis store, one Lua round trip, then the
 * clip). Beside it, the floor (node:http in, one undici request out) proxying the same clip
 * from the loopback upstream: what the cheapest possible gateway pays without a cache.
 */
export async function audioCacheScenario(ctx: ScenarioContext): Promise<void> {
  const ws = await ctx.api.call<{ data: { id: string } }>("POST", "/workspaces", {
    name: "bench audio cache",
    audio_cache: true,
  });
  const key = await ctx.api.call<{ key: string }>("POST", "/keys", {
    name: "bench audio cache",
    workspace_id: ws.data.id,
  });
  const requests = gatewaySpeech(key.key);
  // The miss that stores the clip; every request measured after it is a hit.
  const primed = await fetch(`${ctx.system.baseUrl}${requests[0]?.path}`, {
    method: "POST",
    headers: requests[0]?.headers,
    body: PROXY_BODY,
  });
  await primed.arrayBuffer();
  if (primed.status !== 200) throw new Error(`audio cache: priming answered ${primed.status}`);
  let floor: HelperProcess | undefined;
  try {
    floor = await startHelper("floor-server.js", {
      FLOOR_UPSTREAM: `http://127.0.0.1:${ctx.upstreamPort}/v1`,
    });
    const details: Record<string, unknown> = {};
    for (const connections of [1, 50]) {
      const hit = await runSpeech(
        ctx,
        "9 audio cache hit",
        ctx.system.baseUrl,
        ctx.system.pid,
        requests,
        connections,
      );
      const proxied = await runSpeech(
        ctx,
        "9 floor proxying the clip",
        `http://127.0.0.1:${floor.port}`,
        floor.child.pid ?? 0,
        FLOOR,
        connections,
      );
      const cpu = (r: typeof hit) => fmt(r.serverCpuMsPerRequest ?? Number.NaN);
      if (connections === 1) {
        ctx.report.row({
          scenario: "9 audio cache hit c1 first byte",
          reqPerSec: hit.reqPerSec,
          p50Ms: hit.firstBodyByteMs.p50,
          p99Ms: hit.firstBodyByteMs.p99,
          baseline: describe(
            proxied.reqPerSec,
            proxied.firstBodyByteMs.p50,
            proxied.firstBodyByteMs.p99,
            "floor first byte",
          ),
          ratio: hit.reqPerSec / proxied.reqPerSec,
          target: `first byte p50 ${fmt(hit.firstBodyByteMs.p50)} <= ${TARGET_HIT_TTFB_P50_MS} ms`,
          pass: hit.firstBodyByteMs.p50 <= TARGET_HIT_TTFB_P50_MS,
        });
      } else {
        ctx.report.row({
          scenario: `9 audio cache hit c${connections} req/s`,
          reqPerSec: hit.reqPerSec,
          p50Ms: hit.totalMs.p50,
          p99Ms: hit.totalMs.p99,
          baseline: describe(
            proxied.reqPerSec,
            proxied.totalMs.p50,
            proxied.totalMs.p99,
            "floor total",
          ),
          ratio: hit.reqPerSec / proxied.reqPerSec,
          target: `req/s above the floor's (CPU/req: hit ${cpu(hit)} ms, floor ${cpu(proxied)} ms)`,
          pass: hit.reqPerSec / proxied.reqPerSec > TARGET_REQ_PER_SEC_VS_FLOOR,
        });
      }
      details[`c${connections}`] = { hit, floor: proxied };
      progress(
        `audio cache c${connections}: hit ${fmt(hit.reqPerSec)} req/s, first byte p50 ${fmt(hit.firstBodyByteMs.p50)} ms; floor ${fmt(proxied.reqPerSec)} req/s, p50 ${fmt(proxied.firstBodyByteMs.p50)} ms`,
      );
    }
    ctx.report.measurement("audioCache", { model: UPSTREAM_MODEL, ...details });
  } finally {
    await floor?.child.stop(5_000);
  }
}
