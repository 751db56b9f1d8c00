import { expect } from "chai";
import fc from "fast-check";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { createGuardrail, createKey, createWorkspace } from "../kit/gateway-harness.js";
import { Api } from "../kit/http.js";
import { type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";
import { brokenBodies, mutate, mutations } from "./hostile-values.js";

/**
 * Seeded fuzzing of every JSON route: valid bodies mutated (wrong types, edge
 * numbers, huge and deep values, unicode, nulls, extra fields) plus bodies
 * that are not JSON objects. Whatever arrives, the answer is never a 5xx, an
 * error always has the one shape with a bounded message, and the system stays
 * up. A failure names the seed, route and body: FUZZ_SEED=<seed> reproduces it.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
/** Generated bodies per route (CI keeps the whole suite near a minute). */
const RUNS = Number(process.env.FUZZ_RUNS ?? 1000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 32);
const BATCHES_PER_HEALTH_CHECK = 10;

interface RouteCase {
  name: string;
  method: string;
  path: () => string;
  base: () => Record<string, unknown>;
  /** The key to send (management by default). */
  key?: () => string;
}

describe("fuzz: JSON routes never answer 5xx", function () {
  this.timeout(300_000);
  let redis: LaneStore;
  let system: RunningSystem;
  let api: Api;
  let baseUrl: string;
  const ids = {
    guardrail: "",
    key: "",
    keyHash: "",
    workspace: "",
    creditsWorkspace: "",
    speechKey: "",
    webhook: "",
    webhookWorkspace: "",
  };

  before(async function () {
    this.timeout(120_000);
    redis = await startLaneStore();
    system = await startTestSystem(redis.url, { embeddedEngine: "auto", enginePoolSize: 1 });
    baseUrl = `http://127.0.0.1:${system.gatewayPorts.global}`;
    api = new Api(baseUrl, MANAGEMENT_KEY);
    ids.guardrail = (await createGuardrail(api)).id;
    const key = await createKey(api);
    ids.key = key.data.hash;
    ids.keyHash = key.data.hash;
    ids.workspace = (await createWorkspace(api)).id;
    ids.creditsWorkspace = (await createWorkspace(api)).id;
    // Speech bodies are checked in full, then refused at admission: the key's
    // workspace has a balance of zero, so no audio is ever synthesized.
    const speechWorkspace = (await createWorkspace(api)).id;
    for (const amount_usd of [1, -1]) {
      const res = await api.post(`/api/v1/workspaces/${speechWorkspace}/credits`, { amount_usd });
      expect(res.status).to.equal(200);
    }
    ids.speechKey = (await createKey(api, { workspace_id: speechWorkspace })).secret;
    ids.webhookWorkspace = (await createWorkspace(api)).id;
    const hook = await api.post("/api/v1/webhooks", {
      workspace_id: ids.webhookWorkspace,
      url: "http://127.0.0.1:9/fuzz",
    });
    expect(hook.status).to.equal(201);
    ids.webhook = hook.body.data.id;
  });

  after(async () => {
    await system?.close();
    await redis?.stop();
  });

  const SPEECH = {
    model: "railgate/espeak-ng",
    voice: "en-us",
    input: "Hi.",
    response_format: "mp3",
    speed: 1,
    session_id: "fuzz",
    user: "fuzzer",
    trace: { trace_id: "t-1", span_name: "s", tags: ["a", 1, null] },
    provider: { zdr: false, data_collection: "allow", options: { espeak: { pitch: 1 } } },
  };

  const routes: RouteCase[] = [
    {
      name: "POST /webhooks",
      method: "POST",
      path: () => "/api/v1/webhooks",
      base: () => ({
        workspace_id: ids.webhookWorkspace,
        url: "https://alerts.example.com/hook?x=1",
        secret: "whsec_fuzz_secret_0123456789",
        thresholds_pct: [50, 80, 100],
        credits_below_usd: 5,
        enabled: true,
      }),
    },
    {
      name: "PATCH /webhooks/{id}",
      method: "PATCH",
      path: () => `/api/v1/webhooks/${ids.webhook}`,
      base: () => ({
        url: "http://127.0.0.1:9/fuzz",
        thresholds_pct: [90],
        credits_below_usd: null,
        enabled: false,
      }),
    },
    {
      name: "POST /guardrails",
      method: "POST",
      path: () => "/api/v1/guardrails",
      base: () => ({
        name: "fuzz guardrail",
        description: "d",
        allowed_models: ["railgate/espeak-ng"],
        allowed_providers: ["espeak"],
        ignored_models: ["openai/tts-1"],
        allowed_data_regions: ["europe", "global"],
        content_filter_builtins: [{ slug: "email", action: "redact", label: "E" }],
        content_filters: [{ pattern: "secret\\d+", action: "block", label: "S" }],
        enforce_zdr_openai: true,
        allow_safety_retention_google: null,
        include_byok_in_budgets: false,
        limit_usd: 5,
        reset_interval: "daily",
      }),
    },
    {
      name: "PATCH /guardrails/{id}",
      method: "PATCH",
      path: () => `/api/v1/guardrails/${ids.guardrail}`,
      base: () => ({
        description: "patched",
        allowed_models: null,
        content_filters: [{ pattern: "x+", action: "flag" }],
        limit_usd: 1,
        reset_interval: "weekly",
      }),
    },
    {
      name: "POST /keys",
      method: "POST",
      path: () => "/api/v1/keys",
      base: () => ({
        name: "fuzz key",
        kind: "standard",
        member_user_id: "user-1",
        limit: 10,
        rate_limit_per_minute: 60,
      }),
    },
    {
      name: "PATCH /keys/{hash}",
      method: "PATCH",
      path: () => `/api/v1/keys/${ids.key}`,
      base: () => ({ name: "renamed", disabled: false, limit: 5, rate_limit_per_minute: 100 }),
    },
    {
      name: "POST /workspaces",
      method: "POST",
      path: () => "/api/v1/workspaces",
      base: () => ({ name: "Fuzz workspace", description: "d" }),
    },
    {
      name: "PATCH /workspaces/{id}",
      method: "PATCH",
      path: () => `/api/v1/workspaces/${ids.workspace}`,
      base: () => ({ name: "Renamed workspace", description: null }),
    },
    {
      name: "POST /guardrails/{id}/assignments/keys",
      method: "POST",
      path: () => `/api/v1/guardrails/${ids.guardrail}/assignments/keys`,
      base: () => ({ key_hashes: [ids.keyHash] }),
    },
    {
      name: "POST /guardrails/{id}/assignments/members/remove",
      method: "POST",
      path: () => `/api/v1/guardrails/${ids.guardrail}/assignments/members/remove`,
      base: () => ({ member_user_ids: ["user-1", "user-2"] }),
    },
    {
      name: "POST /workspaces/{id}/credits",
      method: "POST",
      path: () => `/api/v1/workspaces/${ids.creditsWorkspace}/credits`,
      base: () => ({ amount_usd: 1 }),
    },
    {
      name: "POST /audio/speech",
      method: "POST",
      path: () => "/api/v1/audio/speech",
      base: () => structuredClone(SPEECH),
      key: () => ids.speechKey,
    },
  ];

  async function send(route: RouteCase, body: string) {
    const res = await fetch(`${baseUrl}${route.path()}`, {
      method: route.method,
      headers: {
        authorization: `Bearer ${route.key?.() ?? MANAGEMENT_KEY}`,
        "content-type": "application/json",
      },
      body,
    });
    const text = Buffer.from(await res.arrayBuffer()).toString("utf8");
    return { status: res.status, type: res.headers.get("content-type") ?? "", text };
  }

  /** The rules every answer keeps; returns what broke them, or undefined. */
  function problemOf(res: { status: number; type: string; text: string }): string | undefined {
    if (res.status >= 500) return `status ${res.status}`;
    if (res.status < 300) return undefined;
    if (!res.type.startsWith("application/json")) return `error content-type ${res.type}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      return "error body is not JSON";
    }
    const err = (parsed as { error?: { code?: unknown; message?: unknown } }).error;
    if (Object.keys(parsed as object).join() !== "error" || !err) return "not the error shape";
    if (Object.keys(err).sort().join() !== "code,message") return "not the error shape";
    if (err.code !== res.status) return `code ${String(err.code)} != status ${res.status}`;
    if (typeof err.message !== "string" || err.message.length === 0) return "no message";
    if (err.message.length > 1000) return `message of ${err.message.length} characters`;
    return undefined;
  }

  /** The system is up and serving: health, and a valid speech body reaches admission. */
  async function expectHealthy(): Promise<void> {
    const health = await fetch(`${baseUrl}/healthz`);
    expect(health.status, "healthz").to.equal(200);
    await health.arrayBuffer();
    const speech = await send(routes[routes.length - 1] as RouteCase, JSON.stringify(SPEECH));
    expect(speech.status, `speech after a batch: ${speech.text.slice(0, 200)}`).to.equal(402);
  }

  for (const route of routes) {
    it(`${route.name}: ${RUNS} generated bodies, no 5xx, the error shape, bounded messages`, async () => {
      const base = route.base();
      const seed = SEED + routes.indexOf(route);
      const bodies = fc.sample(
        fc.oneof(
          { weight: 19, arbitrary: mutations(base).map((ms) => JSON.stringify(mutate(base, ms))) },
          { weight: 1, arbitrary: brokenBodies(base) },
        ),
        { seed, numRuns: RUNS },
      );
      // The unmutated body is accepted, so the 4xx below are the mutations' doing.
      const valid = await send(route, JSON.stringify(base));
      expect(valid.status, `valid ${route.name}: ${valid.text.slice(0, 300)}`).to.be.oneOf([
        200, 201, 402,
      ]);
      for (let start = 0, batch = 0; start < bodies.length; start += CONCURRENCY, batch++) {
        const slice = bodies.slice(start, start + CONCURRENCY);
        const answers = await Promise.all(slice.map((b) => send(route, b)));
        answers.forEach((res, i) => {
          const problem = problemOf(res);
          if (problem) {
            expect.fail(
              `${route.name} (FUZZ_SEED=${SEED}, body #${start + i}): ${problem}\n` +
                `body: ${(slice[i] ?? "").slice(0, 400)}\nanswer: ${res.text.slice(0, 400)}`,
            );
          }
        });
        if (batch % BATCHES_PER_HEALTH_CHECK === BATCHES_PER_HEALTH_CHECK - 1)
          await expectHealthy();
      }
      await expectHealthy();
    });
  }
});
