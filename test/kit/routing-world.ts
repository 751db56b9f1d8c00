import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { endpoint, model, provider, writeCatalogFile } from "./catalog-entries.js";
import { FakeOpenAi } from "./fake-openai.js";
import { Api, postSpeech, type SpeechResponse } from "./http.js";
import { type LaneStore, startLaneStore } from "./lane.js";
import { sleep } from "./poll.js";
import { MANAGEMENT_KEY, startTestSystem } from "./system.js";

/**
 * A system whose models each have several OpenAI-compatible endpoints on fake providers, with
 * circuit breakers and retries on (the kit turns them off elsewhere), for the provider-routing
 * suites. Each test uses models of its own: breakers and measurements are per endpoint (model
 * and provider), so tests never see each other's.
 */
export const ROUTING = {
  breakerFailures: 3,
  /** Short, so a test can wait the cool-down out (the wait is not asserted). */
  breakerCooldownMs: 400,
  retries: 2,
} as const;

/** Providers by price per million characters (the catalog's price; sort "price" reads it). */
export const PRICES = { pricey: 30, mid: 10, cheap: 5, lagging: 10, prompt: 10 } as const;

const FAKES = {
  pricey: () => new FakeOpenAi(),
  mid: () => new FakeOpenAi(),
  cheap: () => new FakeOpenAi(),
  /** Its first byte comes late: a slow start for provider.sort "latency". */
  lagging: () => new FakeOpenAi({ headDelayMs: 400 }),
  prompt: () => new FakeOpenAi(),
  /** Many pieces with pauses: low bytes/s for provider.sort "throughput". */
  trickle: () => new FakeOpenAi({ chunks: 16, chunkDelayMs: 40 }),
  burst: () => new FakeOpenAi({ chunks: 16, chunkDelayMs: 0 }),
  flaky: () => new FakeOpenAi(),
  steady: () => new FakeOpenAi(),
  solo: () => new FakeOpenAi(),
  cloner: () => new FakeOpenAi(),
};
export type RoutingFakes = { [K in keyof typeof FAKES]: FakeOpenAi };
export type ProviderId = keyof RoutingFakes;

const PRICE_OF: Partial<Record<ProviderId, number>> = PRICES;

/** The test catalog's models: id -> its endpoints' providers, in catalog order. */
export const ROUTED_MODELS = {
  "route/sort-price": ["pricey", "mid", "cheap"],
  "route/order": ["pricey", "mid", "cheap"],
  "route/only-ignore": ["pricey", "mid", "cheap"],
  "route/max-price": ["pricey", "mid", "cheap"],
  "route/no-fallbacks": ["flaky", "steady"],
  "route/latency": ["lagging", "prompt"],
  "route/throughput": ["trickle", "burst"],
  "route/explain": ["flaky", "steady"],
  "health/breaker": ["flaky", "steady"],
  "health/probe-fails": ["flaky", "steady"],
  "health/retry": ["solo"],
  "health/retry-exhausted": ["solo"],
  "health/not-retryable": ["solo"],
  "health/after-first-byte": ["solo"],
  "health/cut-then-steady": ["solo", "steady"],
  "health/all-open": ["flaky"],
  "ids/clone": ["cloner"],
} as const satisfies Record<string, readonly ProviderId[]>;
export type RoutedModel = keyof typeof ROUTED_MODELS;

export interface RoutingWorld {
  fakes: RoutingFakes;
  system: RunningSystem;
  baseUrl: string;
  admin: Api;
  key: { secret: string; hash: string; workspaceId: string };
  speak(body: Record<string, unknown>): Promise<SpeechResponse>;
  /** A served request's generation record (polled until it is written). */
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  record(res: SpeechResponse): Promise<any>;
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  recordById(id: string): Promise<any>;
  /** A model's records, newest first, once there are at least `count` (failures have no id). */
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  recordsOf(modelId: string, count: number, status?: string): Promise<any[]>;
}

/** Registers hooks in the calling describe(): fakes, catalog, the lane's store, one system. */
export function useRoutingWorld(): RoutingWorld {
  const w = {} as RoutingWorld;
  let redis: LaneStore | undefined;
  let dir: string | undefined;
  before(async function () {
    this.timeout(60_000);
    w.fakes = Object.fromEntries(
      Object.entries(FAKES).map(([name, make]) => [name, make()]),
    ) as RoutingFakes;
    await Promise.all(Object.values(w.fakes).map((f) => f.start()));
    dir = mkdtempSync(join(tmpdir(), "railgate-routing-"));
    const catalog = {
      providers: Object.fromEntries(
        Object.entries(w.fakes).map(([name, f]) => [
          name,
          provider(f.baseUrl, { timeout_ms: 5_000 }),
        ]),
      ),
      models: Object.entries(ROUTED_MODELS).map(([id, providers]) =>
        model(
          id,
          providers.map((p) =>
            endpoint(p, {
              price: PRICE_OF[p] ?? 20,
              caps: { voice_cloning: true, max_references: 3 },
            }),
          ),
          { voices: ["alloy"], description: `routing test model ${id}` },
        ),
      ),
    };
    redis = await startLaneStore();
    w.system = await startTestSystem(redis.url, {
      env: {
        RAILGATE_SPEECH_CATALOG_FILE: writeCatalogFile(dir, catalog),
        RAILGATE_SPEECH_BREAKER_FAILURES: String(ROUTING.breakerFailures),
        RAILGATE_SPEECH_BREAKER_COOLDOWN_MS: String(ROUTING.breakerCooldownMs),
        RAILGATE_SPEECH_RETRIES: String(ROUTING.retries),
        RAILGATE_SPEECH_RETRY_BACKOFF_MS: "5",
        RAILGATE_SPEECH_RETRY_BACKOFF_MAX_MS: "20",
      },
    });
    w.baseUrl = `http://127.0.0.1:${w.system.gatewayPorts.global}`;
    w.admin = new Api(w.baseUrl, MANAGEMENT_KEY);
    const created = await w.admin.post("/api/v1/keys", { name: "routing suite key" });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    w.key = {
      secret: created.body.key,
      hash: created.body.data.hash,
      workspaceId: created.body.data.workspace_id,
    };
    w.speak = (body) => postSpeech(w.baseUrl, w.key.secret, { voice: "alloy", ...body });
    w.recordById = async (id) => {
      const api = new Api(w.baseUrl, w.key.secret);
      for (let i = 0; i < 200; i++) {
        const res = await api.get(`/api/v1/generation?id=${encodeURIComponent(id)}`);
        if (res.status === 200) return res.body.data;
        expect(res.status, JSON.stringify(res.body)).to.equal(404);
        await sleep(25);
      }
      throw new Error(`generation ${id} was never written`);
    };
    w.record = async (res) => {
      const id = res.headers.get("x-generation-id");
      expect(id, "a served request has a generation id").to.be.a("string");
      return w.recordById(id as string);
    };
    w.recordsOf = async (modelId, count, status) => {
      const api = new Api(w.baseUrl, w.key.secret);
      for (let i = 0; i < 200; i++) {
        const q = `model=${encodeURIComponent(modelId)}&limit=100${status ? `&status=${status}` : ""}`;
        const res = await api.get(`/api/v1/generations?${q}`);
        expect(res.status, JSON.stringify(res.body)).to.equal(200);
        if (res.body.data.length >= count) return res.body.data;
        await sleep(25);
      }
      throw new Error(`${modelId} never had ${count} records`);
    };
  });
  beforeEach(() => {
    for (const f of Object.values(w.fakes ?? {})) f.reset();
  });
  after(async () => {
    await w.system?.close();
    await redis?.stop();
    await Promise.all(Object.values(w.fakes ?? {}).map((f) => f.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return w;
}

/** The routing steps of a record as [provider, outcome] pairs, in order. */
// biome-ignore lint/suspicious/noExplicitAny: generation JSON
export function outcomes(record: any): [string, string][] {
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  return record.routing.map((s: any) => [s.provider, s.outcome]);
}
