import { Redis } from "ioredis";
import { MANAGEMENT_KEY } from "../constants.js";
import { startHelper } from "../helper-process.js";
import { type LoadRequest, warmThenRun } from "../load.js";
import { peakRssMb } from "../processes.js";
import { describe } from "../table.js";
import { checkClean, progress, type ScenarioContext } from "./context.js";

const CONNECTIONS = 50;
const READ_TARGET = 0.4;
const BASELINE_KEY = "bench:baseline:guardrail";

/**
 * 1. Management reads and writes through the gateway (auth, gRPC hop to the
 * guardrail service, Redis, protobuf <-> JSON) against a bare node:http server
 * doing one Redis GET per request. Each connection works on its own guardrail
 * so concurrent PATCHes measure the write path, not compare-and-set retries
 * on one hot record.
 */
export async function managementScenario(ctx: ScenarioContext): Promise<void> {
  progress("management: creating guardrails");
  const ids: string[] = [];
  for (let i = 0; i < CONNECTIONS; i++) {
    ids.push(
      await ctx.api.createGuardrail({
        name: `bench management ${i}`,
        description: "created by npm run bench",
        allowed_data_regions: ["global", "europe"],
        content_filter_builtins: [{ slug: "email", action: "redact" }],
        limit_usd: 1000,
        reset_interval: "daily",
      }),
    );
  }
  const auth = { authorization: `Bearer ${MANAGEMENT_KEY}` };
  const get = (i: number): LoadRequest[] => [
    { method: "GET", path: `/api/v1/guardrails/${ids[i % ids.length]}`, headers: auth },
  ];
  const patch = (i: number): LoadRequest[] => [
    {
      method: "PATCH",
      path: `/api/v1/guardrails/${ids[i % ids.length]}`,
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ description: `patched by bench connection ${i}` }),
    },
  ];

  // The baseline answers with a real guardrail document, so response sizes match.
  const sample = await ctx.api.call("GET", `/guardrails/${ids[0]}`);
  const redis = new Redis(ctx.redisUrl);
  await redis.set(BASELINE_KEY, JSON.stringify(sample));
  redis.disconnect();
  const baseline = await startHelper("baseline-server.js", {
    REDIS_URL: ctx.redisUrl,
    BASELINE_KEY,
  });
  try {
    const run = (
      label: string,
      origin: string,
      serverPid: number,
      requests: (i: number) => LoadRequest[],
    ) =>
      warmThenRun(
        {
          origin,
          serverPid,
          label,
          connections: CONNECTIONS,
          duration: ctx.config.seconds,
          requests,
        },
        ctx.config.warmupSeconds,
      );
    const baseOrigin = `http://127.0.0.1:${baseline.port}`;

    progress("management: GET through the gateway");
    const gwGet = await run("1 mgmt GET gateway", ctx.system.baseUrl, ctx.system.pid, get);
    checkClean("management GET", gwGet);
    const rssAfterGet = ctx.system.peakRssMb();
    progress("management: GET baseline");
    const baseGet = await run("1 mgmt GET baseline", baseOrigin, baseline.child.pid, get);
    checkClean("baseline GET", baseGet);

    progress("management: PATCH through the gateway");
    const gwPatch = await run("1 mgmt PATCH gateway", ctx.system.baseUrl, ctx.system.pid, patch);
    checkClean("management PATCH", gwPatch);
    const rssAfterPatch = ctx.system.peakRssMb();
    progress("management: PATCH baseline");
    const basePatch = await run("1 mgmt PATCH baseline", baseOrigin, baseline.child.pid, patch);
    checkClean("baseline PATCH", basePatch);
    const baselineRss = peakRssMb(baseline.child.pid);

    const ratioGet = gwGet.reqPerSec / baseGet.reqPerSec;
    ctx.report.row({
      scenario: `1 mgmt GET /guardrails/{id} c${CONNECTIONS}`,
      reqPerSec: gwGet.reqPerSec,
      p50Ms: gwGet.totalMs.p50,
      p99Ms: gwGet.totalMs.p99,
      peakRssMb: rssAfterGet,
      baseline: describe(
        baseGet.reqPerSec,
        baseGet.totalMs.p50,
        baseGet.totalMs.p99,
        "http+redis GET",
      ),
      ratio: ratioGet,
      target: `ratio >= ${READ_TARGET.toFixed(2)}`,
      pass: ratioGet >= READ_TARGET,
    });
    ctx.report.row({
      scenario: `1 mgmt PATCH /guardrails/{id} c${CONNECTIONS}`,
      reqPerSec: gwPatch.reqPerSec,
      p50Ms: gwPatch.totalMs.p50,
      p99Ms: gwPatch.totalMs.p99,
      peakRssMb: rssAfterPatch,
      baseline: describe(
        basePatch.reqPerSec,
        basePatch.totalMs.p50,
        basePatch.totalMs.p99,
        "http+redis GET",
      ),
      ratio: gwPatch.reqPerSec / basePatch.reqPerSec,
      target: "(none; reads only)",
    });
    ctx.report.measurement("management", {
      connections: CONNECTIONS,
      guardrails: ids.length,
      gatewayGet: gwGet,
      baselineGet: baseGet,
      gatewayPatch: gwPatch,
      baselinePatch: basePatch,
      systemPeakRssMb: { afterGet: rssAfterGet, afterPatch: rssAfterPatch },
      baselinePeakRssMb: baselineRss,
    });
  } finally {
    await baseline.child.stop(5_000);
  }
}
