import { expect } from "chai";
import {
  builtInEspeak,
  endpoint,
  model,
  provider,
  writeCatalogFile,
} from "../kit/catalog-entries.js";
import { expectStatus } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { makeTempDir, removeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { MANAGEMENT_KEY } from "../kit/system.js";
import { startSystemProcess } from "../kit/system-process.js";

/** A clip in many slow pieces: every stream is still running when its client hangs up. */
const SLOW_MODEL = "flood/slow";
/** A provider whose port never listens: every call to it fails (connection refused). */
const REFUSED_MODEL = "flood/refused";
const SPEECH = "/api/v1/audio/speech";
const STREAMS = 1_000;
const CONCURRENCY = 50;
/** The most warn/error lines 1,000 hang-ups may cost (the dedupe summaries, not one per stream). */
const MAX_LOUD_LINES = 20;

interface LogLine {
  level: number;
  msg: string;
  component?: string;
  [field: string]: unknown;
}

const WARN = 40;

/**
 * What a key holder can make the logs say. A real system process (the all-in-one entry point
 * at RAILGATE_LOG_LEVEL=info, its stdout captured whole) against a real Redis and a fake provider: 1,000
 * clients that hang up mid-stream, and streams cut by a shutdown, are expected outcomes that
 * must not each write a warning or an error with a stack trace; a failed upstream call logs its
 * failure, never a protobuf message or descriptor.
 */
describe("faults: log flood", function () {
  this.timeout(300_000);
  let redis: ThrowawayRedis;
  let slow: FakeOpenAi;
  let dir: string;
  let catalog: string;

  before(async () => {
    redis = await startRedis();
    slow = await new FakeOpenAi({ chunks: 400, chunkDelayMs: 20 }).start();
    dir = makeTempDir("railgate-log-flood-");
    const ep = (id: string) => endpoint(id, { price: 20 });
    catalog = writeCatalogFile(dir, {
      providers: {
        slow: provider(slow.baseUrl, { timeout_ms: 5_000 }),
        refused: provider("http://127.0.0.1:1/v1", { timeout_ms: 5_000 }),
      },
      models: [
        builtInEspeak(),
        model(SLOW_MODEL, [ep("slow")], { voices: ["alloy"], description: "slow" }),
        model(REFUSED_MODEL, [ep("refused")], { voices: ["alloy"], description: "refused" }),
      ],
    });
  });

  after(async () => {
    await slow?.close();
    await redis?.stop();
    if (dir) removeTempDir(dir);
  });

  /** A system process whose every stdout line is kept, parsed. */
  async function start(env: Record<string, string> = {}) {
    const system = await startSystemProcess(redis.url, {
      RAILGATE_SPEECH_CATALOG_FILE: catalog,
      RAILGATE_EMBEDDED_ENGINE: "off",
      RAILGATE_RATE_LIMIT_PER_MINUTE: "0",
      // 1,000 streams on a loaded CI machine: the first-message deadline is not what is tested.
      RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS: "120000",
      // Nor is Redis's command time-out: CI saw one hang-up answered 503 with both cores
      // saturated, where a starved redis-server can outlast the 1 s default (scale-out does the
      // same; a reply merely left unread by a stalled loop no longer fails: read-replies-first.ts).
      RAILGATE_REDIS_COMMAND_TIMEOUT_MS: "10000",
      // Every failure must reach the upstream and answer its 502: no circuit breaker (it would
      // answer 503 after 5) and no retries (each request is one upstream failure).
      RAILGATE_SPEECH_BREAKER_FAILURES: "0",
      RAILGATE_SPEECH_RETRIES: "0",
      RAILGATE_INTERNAL_TRANSPORT:
        process.env.RAILGATE_TEST_TRANSPORT === "grpc" ? "grpc" : "in-process",
      ...env,
    });
    const lines: LogLine[] = [];
    let pending = "";
    system.child.process.stdout?.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const part of parts) if (part.trim()) lines.push(JSON.parse(part) as LogLine);
    });
    const admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const created = await admin.post("/api/v1/keys", { name: "log flood" });
    expectStatus(created, 201);
    return { system, lines, key: created.body.key as string };
  }

  function speak(baseUrl: string, key: string, model: string, signal?: AbortSignal) {
    return fetch(`${baseUrl}${SPEECH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, voice: "alloy", input: "x".repeat(200) }),
      signal,
    });
  }

  /** Starts a stream, reads its first piece of audio, then hangs up. */
  async function hangUp(baseUrl: string, key: string): Promise<void> {
    let abort = new AbortController();
    let res = await speak(baseUrl, key, SLOW_MODEL, abort.signal);
    // Seen once with three test lanes saturating both cores: node:http's periodic request
    // time-out check answered 408 to a fresh connection. Not what this test is about (the
    // log lines of hang-ups): that request is made again, and the access count below still
    // counts every hang-up.
    for (let retry = 0; res.status === 408 && retry < 3; retry++) {
      abort = new AbortController();
      res = await speak(baseUrl, key, SLOW_MODEL, abort.signal);
    }
    if (res.status !== 200) expect.fail(`speech answered ${res.status}: ${await res.text()}`);
    const first = await res.body?.getReader().read();
    expect(first?.done).to.equal(false);
    abort.abort();
  }

  function loud(lines: LogLine[]): LogLine[] {
    return lines.filter((l) => l.level >= WARN);
  }

  function withStack(lines: LogLine[]): LogLine[] {
    return lines.filter((l) => JSON.stringify(l).includes('"stack"'));
  }

  it(`1,000 clients hanging up mid-stream write at most ${MAX_LOUD_LINES} warn/error lines, none with a stack`, async () => {
    const { system, lines, key } = await start();
    try {
      const before = lines.length;
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < STREAMS) {
            next++;
            await hangUp(system.baseUrl(), key);
          }
        }),
      );
      // Every hang-up has been seen by the gateway once its access line is out.
      const access = () => lines.filter((l) => l.component === "access" && l.route === SPEECH);
      await pollUntil(
        async () => access().length,
        (n) => n >= STREAMS,
        400,
      );
      expect(access()).to.have.length(STREAMS);
      expect(access().filter((l) => l.completed === false)).to.have.length(STREAMS);
      // The streams settle (and log, if anything) after their access line: stop the process,
      // which waits for them and writes out any pending dedupe counts.
      await system.child.stop(20_000);
      const during = lines.slice(before);
      expect(withStack(during), "lines with a stack").to.deep.equal([]);
      expect(loud(during).length, JSON.stringify(loud(during).slice(0, 3))).to.be.at.most(
        MAX_LOUD_LINES,
      );
    } finally {
      await system.child.stop(10_000);
    }
  });

  it("a failed upstream call logs its code and reason, never a protobuf message or descriptor", async () => {
    const { system, lines, key } = await start();
    try {
      const res = await speak(system.baseUrl(), key, REFUSED_MODEL);
      expect(res.status).to.equal(502);
      await res.arrayBuffer();
      const id = res.headers.get("x-request-id");
      await pollUntil(
        async () => lines.filter((l) => l.requestId === id && l.component === "access"),
        (m) => m.length > 0,
      );
      const mine = lines.filter((l) => l.requestId === id && l.component !== "access");
      expect(mine, "the failure is logged").to.not.be.empty;
      for (const line of mine) {
        const text = JSON.stringify(line);
        expect(text, text).to.not.match(/typeName|"desc"|"file"|descriptor/);
        expect(text, text).to.not.include('"stack"');
        expect(line.level, text).to.equal(WARN);
      }
      const gateway = mine.find((l) => l.component === "gateway");
      expect(gateway?.err).to.deep.include({
        type: "ConnectError",
        code: "Unavailable",
        reason: "UPSTREAM_UNREACHABLE",
      });
    } finally {
      await system.child.stop(10_000);
    }
  });

  it("the same upstream failure 200 times is a few lines that count every one", async () => {
    const { system, lines, key } = await start();
    const before = lines.length;
    const times = 200;
    for (let i = 0; i < times; i++) {
      const res = await speak(system.baseUrl(), key, REFUSED_MODEL);
      expect(res.status).to.equal(502);
      await res.arrayBuffer();
    }
    // Stopping writes out the counts of the window still open.
    await system.child.stop(10_000);
    const refused = lines
      .slice(before)
      .filter(
        (l) =>
          l.component === "gateway" && l.msg.startsWith("request not served (a dependency failed)"),
      );
    expect(refused.length).to.be.at.most(10);
    // A first line stands for itself; a summary line for the repeats it counts.
    const counted = refused.reduce((n, l) => n + Number(l.repeated ?? 1), 0);
    expect(counted, JSON.stringify(refused)).to.equal(times);
    expect(refused.some((l) => / \(repeated \d+ times\)$/.test(l.msg))).to.equal(true);
  });

  it("streams cut by a shutdown are one warning, not one error each", async () => {
    const { system, lines, key } = await start({ RAILGATE_SHUTDOWN_GRACE_MS: "0" });
    const cut = 50;
    const responses = await Promise.all(
      Array.from({ length: cut }, async () => {
        const res = await speak(system.baseUrl(), key, SLOW_MODEL);
        expect(res.status).to.equal(200);
        const reader = res.body?.getReader();
        expect((await reader?.read())?.done).to.equal(false);
        return reader;
      }),
    );
    const before = lines.length;
    await system.child.stop(10_000);
    await Promise.all(responses.map((r) => r?.cancel().catch(() => undefined)));
    const during = lines.slice(before);
    expect(withStack(during), "lines with a stack").to.deep.equal([]);
    expect(during.filter((l) => l.level > WARN)).to.deep.equal([]);
    const warned = loud(during);
    expect(warned.map((l) => l.msg)).to.deep.equal(["shutdown: cutting requests in progress"]);
    expect(warned[0]?.requests).to.equal(cut);
  });
});
