import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { AUDIO_CACHE_DEFAULTS } from "../../platform/config/config.js";
import {
  builtInEspeak,
  endpoint,
  model,
  provider,
  writeCatalogFile,
} from "../kit/catalog-entries.js";
import { shown } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { createGuardrail, createKey, createWorkspace } from "../kit/gateway-harness.js";
import { Api, postSpeech, type SpeechResponse } from "../kit/http.js";
import { LANE_STORES, type LaneStore, startLaneStore } from "../kit/lane.js";
import { sleep } from "../kit/poll.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

const MODEL = "cache/tts";
const PRICE = 20;
/** A 0.25 s PCM clip (the fake's shortest) is 12,000 bytes: two fit in a budget, not three. */
const BUDGET = 30_000;

/** Polls (a bounded number of times, no time asserted) until `done` holds. */
async function eventually(done: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await done()) return;
    await sleep(10);
  }
  expect.fail(`never happened: ${what}`);
}

for (const store of LANE_STORES) {
  describe(`speech: audio cache (${store} store)`, function () {
    this.timeout(60_000);
    let upstream: FakeOpenAi;
    let redis: LaneStore | undefined;
    let system: RunningSystem;
    let dir: string;
    let baseUrl: string;
    let admin: Api;
    let inputs = 0;

    /** A text no other test speaks (the cache would answer it otherwise). */
    const fresh = (label: string) => `c${++inputs}${label}`.slice(0, 4);

    before(async () => {
      // Many pieces with a pause between them: identical requests arrive while the first is
      // still being synthesized, and join it.
      upstream = await new FakeOpenAi({ chunks: 12, chunkDelayMs: 15 }).start();
      dir = mkdtempSync(join(tmpdir(), "railgate-cache-"));
      const catalog = writeCatalogFile(dir, {
        providers: { fake: provider(upstream.baseUrl, { timeout_ms: 5_000 }) },
        models: [
          builtInEspeak(),
          model(MODEL, [endpoint("fake", { price: PRICE })], {
            voices: ["alloy", "echo"],
            description: "cached test model",
          }),
        ],
      });
      const overrides = {
        env: { RAILGATE_SPEECH_CATALOG_FILE: catalog },
        audioCache: { ...AUDIO_CACHE_DEFAULTS, workspaceBytes: BUDGET },
      };
      if (store === "redis") {
        redis = await startLaneStore();
        system = await startTestSystem(redis.url, overrides);
      } else {
        system = await startTestSystem(undefined, { ...overrides, store: "embedded" });
      }
      baseUrl = `http://127.0.0.1:${system.gatewayPorts.global}`;
      admin = new Api(baseUrl, MANAGEMENT_KEY);
    });

    after(async () => {
      await system?.close();
      await redis?.stop();
      await upstream?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    beforeEach(() => upstream.reset());

    /** A workspace (opted in unless told) and a standard key of it. */
    async function workspaceKey(audioCache = true) {
      const ws = await createWorkspace(admin, { audio_cache: audioCache });
      expect(ws.audio_cache).to.equal(audioCache);
      const key = await createKey(admin, { workspace_id: ws.id });
      return { ws, secret: key.secret, hash: key.data.hash as string };
    }

    function speak(secret: string, input: string, extra: Record<string, unknown> = {}) {
      return postSpeech(baseUrl, secret, {
        model: MODEL,
        voice: "alloy",
        input,
        response_format: "pcm",
        ...extra,
      });
    }

    function ok(res: SpeechResponse): string {
      expect(res.status, shown(res)).to.equal(200);
      const id = res.headers.get("x-generation-id");
      expect(id).to.match(/^gen-/);
      return id as string;
    }

    // biome-ignore lint/suspicious/noExplicitAny: generation JSON
    async function record(secret: string, id: string): Promise<any> {
      const api = new Api(baseUrl, secret);
      // biome-ignore lint/suspicious/noExplicitAny: generation JSON
      let found: any;
      await eventually(async () => {
        const res = await api.get(`/api/v1/generation?id=${id}`);
        found = res.status === 200 ? res.body.data : undefined;
        return found?.status === "completed";
      }, `record ${id}`);
      return found;
    }

    /** Waits until the clip is in the store: a hit then needs no synthesis in progress. */
    async function stored(secret: string, input: string): Promise<SpeechResponse> {
      const before = upstream.requests.length;
      const res = await speak(secret, input);
      ok(res);
      expect(upstream.requests.length).to.equal(before);
      return res;
    }

    it("50 identical concurrent requests make one upstream request, and all get the same audio", async () => {
      const { secret } = await workspaceKey();
      const input = fresh("a");
      const answers = await Promise.all(Array.from({ length: 50 }, () => speak(secret, input)));
      expect(upstream.requests).to.have.length(1);
      const first = answers[0] as SpeechResponse;
      ok(first);
      expect(first.bytes.byteLength).to.be.above(0);
      for (const res of answers) {
        ok(res);
        expect(Buffer.compare(res.bytes, first.bytes)).to.equal(0);
      }
      const records = await Promise.all(
        answers.map((r) => record(secret, r.headers.get("x-generation-id") as string)),
      );
      // One synthesized it; the 49 others were served from its audio, at the cache price.
      expect(records.filter((g) => !g.cached)).to.have.length(1);
      expect(records.filter((g) => g.cached)).to.have.length(49);
      for (const g of records) expect(g.bytes).to.equal(first.bytes.byteLength);
    });

    it("a synthesis that fails midway fails the requests that joined it, and caches nothing", async () => {
      const { secret } = await workspaceKey();
      const input = fresh("f");
      upstream.behaviour = { kind: "cut", afterChunks: 4 };
      const answers = await Promise.allSettled(
        Array.from({ length: 5 }, () => speak(secret, input)),
      );
      expect(upstream.requests).to.have.length(1);
      // The audio had started (200 sent): a stream cut short, never a complete answer.
      for (const a of answers) {
        if (a.status === "fulfilled") expect(a.value.status).to.not.equal(200);
      }
      upstream.behaviour = { kind: "audio" };
      ok(await speak(secret, input));
      expect(upstream.requests).to.have.length(2);
      await stored(secret, input);
    });

    it("a hit after a miss serves identical bytes, billed at the cache price with cache_discount", async () => {
      const { secret } = await workspaceKey();
      const input = fresh("b");
      const miss = await speak(secret, input);
      const missId = ok(miss);
      const missRecord = await record(secret, missId);
      const hit = await stored(secret, input);
      expect(upstream.requests).to.have.length(1);
      expect(Buffer.compare(hit.bytes, miss.bytes)).to.equal(0);
      expect(hit.headers.get("content-type")).to.equal(miss.headers.get("content-type"));
      const hitRecord = await record(secret, ok(hit));
      expect(missRecord.cached).to.equal(false);
      expect(missRecord.cache_discount).to.equal(null);
      const full = (missRecord.characters * PRICE) / 1_000_000;
      expect(missRecord.cost_usd).to.be.closeTo(full, 1e-12);
      expect(hitRecord).to.include({ cached: true, status: "completed", provider: "fake" });
      expect(hitRecord.cost_usd).to.be.closeTo(full * AUDIO_CACHE_DEFAULTS.priceRatio, 1e-12);
      expect(hitRecord.cache_discount).to.be.closeTo(
        full * (1 - AUDIO_CACHE_DEFAULTS.priceRatio),
        1e-12,
      );
      expect(hitRecord.bytes).to.equal(hit.bytes.byteLength);
      expect(hitRecord.duration_seconds).to.equal(missRecord.duration_seconds);
    });

    it("GET /workspaces/:id/audio-cache counts hits, collapsed requests and misses", async () => {
      const { ws, secret } = await workspaceKey();
      const input = fresh("s");
      await Promise.all([speak(secret, input), speak(secret, input)]);
      await stored(secret, input);
      const res = await admin.get(`/api/v1/workspaces/${ws.id}/audio-cache`);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const d = res.body.data;
      expect(d).to.include({ workspace_id: ws.id, enabled: true, clips: 1, budget_bytes: BUDGET });
      expect(d.bytes).to.be.above(0);
      // Three requests: one synthesized, two served (collapsed, or a hit if the first had ended).
      expect(d.misses).to.equal(1);
      expect(d.hits + d.collapsed).to.equal(2);
      expect(d.hits).to.be.at.least(1);
      expect(d.hit_ratio).to.be.closeTo(2 / 3, 1e-9);
      const standard = await new Api(baseUrl, secret).get(
        `/api/v1/workspaces/${ws.id}/audio-cache`,
      );
      expect(standard.status).to.equal(403);
    });

    it("a different voice, speed or format is a different clip", async () => {
      const { secret } = await workspaceKey();
      const input = fresh("v");
      ok(await speak(secret, input));
      ok(await speak(secret, input, { voice: "echo" }));
      ok(await speak(secret, input, { speed: 1.5 }));
      expect(upstream.requests).to.have.length(3);
      ok(await speak(secret, input, { voice: "echo" }));
      expect(upstream.requests).to.have.length(3);
    });

    it("never serves one workspace's clip to another", async () => {
      const a = await workspaceKey();
      const b = await workspaceKey();
      const input = fresh("i");
      ok(await speak(a.secret, input));
      ok(await speak(b.secret, input));
      expect(upstream.requests).to.have.length(2);
      // Each now hits its own.
      await stored(a.secret, input);
      await stored(b.secret, input);
    });

    it("a workspace that did not opt in never caches, until it opts in", async () => {
      const { ws, secret } = await workspaceKey(false);
      const input = fresh("o");
      ok(await speak(secret, input));
      ok(await speak(secret, input));
      expect(upstream.requests).to.have.length(2);
      const res = await admin.patch(`/api/v1/workspaces/${ws.id}`, { audio_cache: true });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.audio_cache).to.equal(true);
      ok(await speak(secret, input));
      expect(upstream.requests).to.have.length(3);
      await stored(secret, input);
    });

    it("a guardrail with forbid_audio_cache, or enforcing ZDR, keeps its keys out of the cache", async () => {
      const { ws, secret, hash } = await workspaceKey();
      const input = fresh("g");
      for (const rule of [{ forbid_audio_cache: true }, { enforce_zdr_other: true }]) {
        const g = await createGuardrail(admin, { workspace_id: ws.id, ...rule });
        expect(g).to.include(rule);
        const assigned = await admin.post(`/api/v1/guardrails/${g.id}/assignments/keys`, {
          key_hashes: [hash],
        });
        expect(assigned.status, JSON.stringify(assigned.body)).to.equal(200);
        upstream.reset();
        ok(await speak(secret, input));
        ok(await speak(secret, input));
        expect(upstream.requests, JSON.stringify(rule)).to.have.length(2);
      }
      // Another key of the workspace, governed by neither, stored nothing for this text either.
      const other = await createKey(admin, { workspace_id: ws.id });
      upstream.reset();
      ok(await speak(other.secret, input));
      expect(upstream.requests).to.have.length(1);
    });

    it("a request asking for zero data retention (provider.zdr) is neither served nor stored", async () => {
      const { secret } = await workspaceKey();
      const input = fresh("z");
      ok(await speak(secret, input, { provider: { zdr: true } }));
      ok(await speak(secret, input, { provider: { zdr: true } }));
      expect(upstream.requests).to.have.length(2);
      // Nothing was kept for the same text asked without it either.
      ok(await speak(secret, input));
      expect(upstream.requests).to.have.length(3);
    });

    it("a clip larger than the workspace's budget is delivered whole, never stored", async () => {
      const { secret } = await workspaceKey();
      // 1 s of PCM (48,000 bytes) against a budget of 30,000.
      const input = `${fresh("L")} is a longer text`;
      const first = await speak(secret, input);
      ok(first);
      expect(first.bytes.byteLength).to.be.above(BUDGET);
      const again = await speak(secret, input);
      ok(again);
      expect(Buffer.compare(again.bytes, first.bytes)).to.equal(0);
      expect(upstream.requests).to.have.length(2);
    });

    it("admission still applies to hits: a key over its rate limit is refused", async () => {
      const { ws } = await workspaceKey();
      const key = await createKey(admin, { workspace_id: ws.id, rate_limit_per_minute: 1 });
      const input = fresh("r");
      ok(await speak(key.secret, input));
      const refused = await speak(key.secret, input);
      expect(refused.status, shown(refused)).to.equal(429);
      expect(upstream.requests).to.have.length(1);
    });

    it("evicts the least recently used clips to stay within the workspace's byte budget", async () => {
      const { secret } = await workspaceKey();
      const [a, b, c] = [fresh("x"), fresh("y"), fresh("z")];
      ok(await speak(secret, a));
      ok(await speak(secret, b));
      await stored(secret, a); // a is now more recently used than b
      ok(await speak(secret, c)); // a third clip: b goes
      expect(upstream.requests).to.have.length(3);
      await stored(secret, a);
      await stored(secret, c);
      upstream.reset();
      ok(await speak(secret, b));
      expect(upstream.requests).to.have.length(1);
    });
  });
}
