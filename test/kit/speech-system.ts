import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import type { RailgateConfig } from "../../platform/config/config.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { shown } from "./expect.js";
import { FakeOpenAi } from "./fake-openai.js";
import { Api, type JsonResponse, postSpeech, type SpeechResponse } from "./http.js";
import { type LaneStore, startLaneStore } from "./lane.js";
import { sleep } from "./poll.js";
import { ACME_KEY, BACKUP_KEY, type Fakes, writeCatalog } from "./speech-catalog.js";
import { MANAGEMENT_KEY, startTestSystem } from "./system.js";

export interface StandardKey {
  secret: string;
  /** sha256 hex of the secret: the key's public id and the gRPC `key_hash`. */
  hash: string;
  workspaceId: string;
}

export interface SpeechHarness {
  redis: LaneStore;
  system: RunningSystem;
  fakes: Fakes;
  baseUrl: string;
  /** Management key. */
  admin: Api;
  /** A standard key of the default workspace. */
  api: Api;
  key: StandardKey;
  /** POST /api/v1/audio/speech with the standard key (or `init.key`; `null` sends none). */
  speak(
    body: unknown,
    init?: { headers?: Record<string, string>; key?: string | null; signal?: AbortSignal },
  ): Promise<SpeechResponse>;
  /** GET /api/v1/generation?id= with the standard key. */
  generation(id: string, key?: string): Promise<JsonResponse>;
  /** Polls the record until `done` holds (a bounded number of reads; no time is asserted). */
  // biome-ignore lint/suspicious/noExplicitAny: generation JSON
  waitForGeneration(id: string, done?: (g: any) => boolean): Promise<any>;
  createKey(body?: Record<string, unknown>): Promise<StandardKey>;
}

const FAKE_NAMES: (keyof Fakes)[] = [
  "acme",
  "backup",
  "broken",
  "unavailable",
  "overloaded",
  "limited",
  "hanging",
  "dropping",
  "locked",
  "slow",
];

function makeFakes(): Fakes {
  return {
    acme: new FakeOpenAi({ apiKey: ACME_KEY }),
    backup: new FakeOpenAi({ apiKey: BACKUP_KEY }),
    broken: new FakeOpenAi({ behaviour: { kind: "status", status: 500 } }),
    unavailable: new FakeOpenAi({ behaviour: { kind: "status", status: 503 } }),
    overloaded: new FakeOpenAi({ behaviour: { kind: "status", status: 529 } }),
    limited: new FakeOpenAi({ behaviour: { kind: "status", status: 429 } }),
    hanging: new FakeOpenAi({ behaviour: { kind: "hang" } }),
    dropping: new FakeOpenAi({ behaviour: { kind: "close" } }),
    locked: new FakeOpenAi({ apiKey: "sk-the-key-nobody-configured" }),
    slow: new FakeOpenAi({ chunks: 60, chunkDelayMs: 25 }),
  };
}

let names = 0;

/** The fakes, their catalog, the lane's store (lane.ts) and one system on them. */
interface SpeechWorld {
  fakes: Fakes;
  redis: LaneStore;
  system: RunningSystem;
  close(): Promise<void>;
}

async function startWorld(
  overrides: Partial<RailgateConfig>,
  database?: SqlDatabase,
): Promise<SpeechWorld> {
  const fakes = makeFakes();
  await Promise.all(FAKE_NAMES.map((n) => fakes[n].start()));
  const dir = mkdtempSync(join(tmpdir(), "railgate-speech-"));
  // Port 1 (tcpmux) never has a listener here; a port that was free a moment ago can be
  // taken by another test's fake before the request is made.
  const dead = "http://127.0.0.1:1/v1";
  const catalog = writeCatalog(dir, fakes, dead);
  const redis = await startLaneStore();
  const system = await startTestSystem(
    redis.url,
    {
      env: {
        RAILGATE_SPEECH_CATALOG_FILE: catalog,
        ACME_API_KEY: ACME_KEY,
        BACKUP_API_KEY: BACKUP_KEY,
      },
      embeddedEngine: "auto",
      enginePoolSize: 2,
      ...overrides,
    },
    { database },
  );
  return {
    fakes,
    redis,
    system,
    close: async () => {
      await system.close();
      await redis.stop();
      await Promise.all(FAKE_NAMES.map((n) => fakes[n].close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The world of every suite that needs no configuration of its own: started by the first that
 * asks, stopped after the whole run. The embedded engine's workers start once per run, not
 * once per suite; suites stay apart by their own standard key (and the keys they create).
 */
let shared: Promise<SpeechWorld> | undefined;

// A root-level hook: runs once, after every suite of the run.
after(async () => {
  const world = shared;
  shared = undefined;
  if (world) await (await world).close();
});

/**
 * Registers hooks in the calling describe(): the fake providers, a catalog file pointing at
 * them, the lane's store (a throwaway redis-server, never 6379, or the embedded one: lane.ts)
 * and the whole system on free ports (shared by the run when `overrides` is empty, the suite's
 * own otherwise), and a standard key of the suite's own. Fakes are reset before each test.
 */
export function useSpeechSystem(
  overrides: Partial<RailgateConfig> = {},
  /** The request log's database (a suite's own, e.g. a real PostgreSQL one); a world of its own. */
  database?: () => SqlDatabase,
): SpeechHarness {
  const h = {} as SpeechHarness;
  const own = Object.keys(overrides).length > 0 || database !== undefined;
  let world: SpeechWorld | undefined;
  before(async function () {
    // The embedded engine warms up its worker threads before the system answers.
    this.timeout(180_000);
    if (own) world = await startWorld(overrides, database?.());
    else {
      shared ??= startWorld({});
      world = await shared;
    }
    h.fakes = world.fakes;
    h.redis = world.redis;
    h.system = world.system;
    h.baseUrl = `http://127.0.0.1:${h.system.gatewayPorts.global}`;
    h.admin = new Api(h.baseUrl, MANAGEMENT_KEY);
    h.createKey = async (body = {}) => {
      const res = await h.admin.post("/api/v1/keys", { name: `speech key ${++names}`, ...body });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      return {
        secret: res.body.key,
        hash: res.body.data.hash,
        workspaceId: res.body.data.workspace_id,
      };
    };
    h.key = await h.createKey();
    h.api = new Api(h.baseUrl, h.key.secret);
    h.speak = (body, init = {}) =>
      postSpeech(h.baseUrl, init.key === undefined ? h.key.secret : init.key, body, init);
    h.generation = (id, key) =>
      (key ? h.api.withKey(key) : h.api).get(`/api/v1/generation?id=${encodeURIComponent(id)}`);
    h.waitForGeneration = async (id, done = () => true) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const res = await h.generation(id);
        if (res.status === 200 && done(res.body.data)) return res.body.data;
        expect(res.status, JSON.stringify(res.body)).to.be.oneOf([200, 404]);
        await sleep(25);
      }
      throw new Error(`generation ${id} never reached the expected state`);
    };
  });
  beforeEach(() => {
    for (const n of FAKE_NAMES) h.fakes?.[n].reset();
  });
  after(async () => {
    if (own) await world?.close();
  });
  return h;
}

/** A 200 audio answer with its generation id. */
export function expectAudio(res: SpeechResponse, contentType?: string): void {
  expect(res.status, shown(res)).to.equal(200);
  if (contentType) expect(res.headers.get("content-type")).to.equal(contentType);
  expect(res.headers.get("x-generation-id")).to.match(/^gen-/);
  expect(res.bytes.byteLength).to.be.above(0);
}

export const PCM_TYPE = "audio/pcm;rate=24000;channels=1";

/** Sentences of distinct words, `n` of them, for long inputs. */
export function sentences(n: number): string {
  const words = ["river", "lantern", "copper", "meadow", "harbor", "violet", "thunder", "maple"];
  return Array.from(
    { length: n },
    (_, i) =>
      `Sentence number ${i + 1} walks past the ${words[i % words.length]} and the ${words[(i + 3) % words.length]} on a quiet afternoon.`,
  ).join(" ");
}
