import { expect } from "chai";
import { endpoint, model, provider, writeCatalogFile } from "../kit/catalog-entries.js";
import { expectError, expectNoLeaks, expectStatus } from "../kit/expect.js";
import { FakeOpenAi } from "../kit/fake-openai.js";
import { Api, postSpeech } from "../kit/http.js";
import { pollUntil, sleep } from "../kit/poll.js";
import { makeTempDir } from "../kit/processes.js";
import { startRedis, type ThrowawayRedis } from "../kit/redis-server.js";
import { type SplitSystem, startSplitSystem } from "../kit/split-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** Short, so the suite is quick; the defaults (10 s and 30 s) are the same code path. */
const FIRST_MESSAGE_MS = 1_500;
const IDLE_MS = 1_500;
const UNARY_MS = 1_500;
/** What a loaded 2-core machine may add to a deadline before the client sees its effect. */
const SLACK_MS = 2_000;

const MODEL = "slow/tts";
const QUICK_MODEL = "quick/tts";
const PRICE_PER_MILLION = 10_000;
const CREDITS = 10;
/** The gateway's line for a 5xx that a dependency caused (gateway/failure-log.ts). */
const NOT_SERVED = "request not served (a dependency failed)";

/** The JSON lines of a child's output that carry this request id. */
function linesOf(output: string, requestId: string): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((l) => l.includes(requestId))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

/**
 * A speech stream has no overall deadline, so a speech process that freezes
 * (SIGSTOP) held the client's request open with no status for good (90 s and counting).
 * The gateway now bounds the wait for the stream's first message (524) and between messages
 * (the response is cut), cancels the call, and the speech service settles what it served
 * once it runs again. Split topology: gateway, guardrail and speech in three processes.
 */
describe("faults: a frozen speech process (split topology)", function () {
  this.timeout(180_000);
  let redis: ThrowawayRedis;
  let upstream: FakeOpenAi;
  let quick: FakeOpenAi;
  let system: SplitSystem;
  let admin: Api;
  let key: { secret: string; hash: string; workspaceId: string };

  const speech = () => system.speech.process;
  const credits = async () => {
    const res = await admin.get(`/api/v1/workspaces/${key.workspaceId}/credits`);
    expectStatus(res, 200);
    return res.body.data.balance_usd as number;
  };

  before(async () => {
    redis = await startRedis();
    // 20 s of audio in 200 pieces, one every 100 ms: a stream that is really in flight.
    upstream = await new FakeOpenAi({ chunks: 200, chunkDelayMs: 100, secondsPerChar: 1 }).start();
    quick = await new FakeOpenAi().start();
    const catalog = writeCatalogFile(makeTempDir("rg-speech-deadlines-"), {
      providers: {
        slow: provider(upstream.baseUrl, { timeout_ms: 30_000 }),
        quick: provider(quick.baseUrl, { timeout_ms: 30_000 }),
      },
      models: [
        model(MODEL, [endpoint("slow", { price: PRICE_PER_MILLION })], {
          voices: ["alloy"],
          description: "A provider that streams slowly",
        }),
        model(QUICK_MODEL, [endpoint("quick", { price: PRICE_PER_MILLION })], {
          voices: ["alloy"],
          description: "A provider that answers at once",
        }),
      ],
    });
    system = await startSplitSystem(redis.url, {
      RAILGATE_SPEECH_CATALOG_FILE: catalog,
      RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS: String(FIRST_MESSAGE_MS),
      RAILGATE_SPEECH_IDLE_TIMEOUT_MS: String(IDLE_MS),
      RAILGATE_GRPC_UNARY_TIMEOUT_MS: String(UNARY_MS),
    });
    admin = new Api(system.baseUrl(), MANAGEMENT_KEY);
    const created = await admin.post("/api/v1/keys", { name: "frozen speech" });
    expectStatus(created, 201);
    key = {
      secret: created.body.key,
      hash: created.body.data.hash,
      workspaceId: created.body.data.workspace_id,
    };
    expectStatus(
      await admin.post(`/api/v1/workspaces/${key.workspaceId}/credits`, { amount_usd: CREDITS }),
      200,
    );
  });

  afterEach(() => {
    // A failed test must not leave the process frozen for the next one.
    speech()?.kill("SIGCONT");
  });

  after(async () => {
    await system?.stop();
    await upstream?.close();
    await quick?.close();
    await redis?.stop();
  });

  it(`answers 524 within RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS (${FIRST_MESSAGE_MS} ms) when the speech process is frozen before the request, and charges nothing`, async () => {
    speech().kill("SIGSTOP");
    const requestId = `frozen-first-${Date.now()}`;
    const started = performance.now();
    const res = await postSpeech(
      system.baseUrl(),
      key.secret,
      { model: MODEL, voice: "alloy", input: "Nobody will hear this." },
      { headers: { "x-request-id": requestId }, signal: AbortSignal.timeout(60_000) },
    );
    const elapsed = performance.now() - started;
    console.log(`      time to 524 with a frozen speech process: ${Math.round(elapsed)} ms`);
    expectError(res, 524, /timed out/i);
    expectNoLeaks(res.body.error.message);
    expect(elapsed).to.be.at.least(FIRST_MESSAGE_MS - 50);
    expect(elapsed).to.be.below(FIRST_MESSAGE_MS + SLACK_MS);
    // The gateway says why, with the request id.
    const logged = await pollUntil(
      async () => linesOf(system.gateway.output(), requestId),
      // The access line (msg "request") comes after the failure's own line.
      (lines) => lines.some((l) => l.msg === "request" && l.status === 524),
    );
    expect(
      logged.some((l) => l.msg === "request" && l.status === 524 && l.completed === true),
    ).to.equal(true);
    expect(JSON.stringify(logged.find((l) => l.msg === NOT_SERVED))).to.match(/speech service/i);

    speech().kill("SIGCONT");
    // Thawed, the service finds the call cancelled: whatever it reserved is released.
    // (It may still be reserving and releasing as it reads the call and its cancellation.)
    expect(
      await pollUntil(
        () => credits(),
        (balance) => balance === CREDITS,
      ),
    ).to.equal(CREDITS);
    const usage = await new Api(system.baseUrl(), key.secret).get("/api/v1/key");
    expectStatus(usage, 200);
    expect(usage.body.data.usage).to.equal(0);
    // And it serves again.
    const ok = await postSpeech(system.baseUrl(), key.secret, {
      model: QUICK_MODEL,
      voice: "alloy",
      input: "Hi.",
    });
    expectStatus(ok, 200);
    expect(ok.bytes.byteLength).to.be.greaterThan(0);
    // That one is charged; nothing else.
    const served = await pollUntil(
      () => credits(),
      (balance) => balance < CREDITS,
    );
    expect(served).to.be.closeTo(CREDITS - (3 * PRICE_PER_MILLION) / 1e6, 1e-9);
  });

  it("cuts the response within RAILGATE_SPEECH_IDLE_TIMEOUT_MS when the speech process freezes mid-stream; thawed, it settles what it served", async () => {
    const before = await credits();
    const requestId = `frozen-idle-${Date.now()}`;
    const input = "A long answer that the provider streams slowly, piece after piece.";
    const res = await fetch(`${system.baseUrl()}/api/v1/audio/speech`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${key.secret}`,
        "content-type": "application/json",
        "x-request-id": requestId,
      },
      body: JSON.stringify({ model: MODEL, voice: "alloy", input, response_format: "pcm" }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).to.equal(200);
    const generationId = res.headers.get("x-generation-id") ?? "";
    expect(generationId).to.match(/^gen-/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.done).to.equal(false);
    let received = first.value?.byteLength ?? 0;

    speech().kill("SIGSTOP");
    const frozenAt = performance.now();
    let ending: "error" | "done" = "done";
    try {
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        received += next.value.byteLength;
      }
    } catch {
      ending = "error";
    }
    const took = performance.now() - frozenAt;
    console.log(`      cut stream ended ${Math.round(took)} ms after the freeze`);
    expect(ending, "the body is cut, not ended cleanly").to.equal("error");
    expect(took).to.be.below(IDLE_MS + SLACK_MS);
    expect(received).to.be.greaterThan(0);
    // 20 s of 24 kHz 16-bit audio would be 960,000 bytes: the client got a part.
    expect(received).to.be.below(960_000);
    const cut = await pollUntil(
      async () => linesOf(system.gateway.output(), requestId),
      (lines) => lines.some((l) => l.msg === "request"),
    );
    expect(cut.find((l) => typeof l.msg === "string" && l.msg.startsWith("speech stream cut")))
      .to.include({ generationId, idleTimeoutMs: IDLE_MS, level: 50 })
      .and.not.have.property("stack");
    expect(cut.find((l) => l.msg === "request")).to.include({ status: 200, completed: false });

    speech().kill("SIGCONT");
    // Thawed, it reads the cancellation: the provider's request is abandoned, and the
    // generation settles as cancelled, for what was served.
    const [upstreamRequest] = upstream.requests.slice(-1);
    expect(await upstreamRequest?.outcome).to.equal("closed-early");
    const api = new Api(system.baseUrl(), key.secret);
    const record = await pollUntil(
      () => api.get(`/api/v1/generation?id=${generationId}`),
      (r) => r.status === 200,
      200,
    );
    expectStatus(record, 200);
    expect(record.body.data.status).to.equal("cancelled");
    expect(record.body.data.bytes).to.be.greaterThan(0);
    // An upstream bills the whole input once it accepted it: so is the client.
    const cost = (input.length * PRICE_PER_MILLION) / 1e6;
    expect(record.body.data.cost_usd).to.be.closeTo(cost, 1e-9);
    expect(await credits()).to.be.closeTo(before - cost, 1e-9);
  });

  it("gives a unary call to a frozen speech process 524 without grpc-js's words (remote_addr)", async () => {
    speech().kill("SIGSTOP");
    const requestId = `frozen-unary-${Date.now()}`;
    const res = await new Api(system.baseUrl(), key.secret).request(
      "GET",
      "/api/v1/generation?id=gen-anything",
      undefined,
      { headers: { "x-request-id": requestId } },
    );
    expectError(res, 524, /timed out/i);
    expectNoLeaks(res.body.error.message);
    // The detail is for the log, with the request id.
    const failed = await pollUntil(
      async () => linesOf(system.gateway.output(), requestId),
      (lines) => lines.some((l) => l.msg === NOT_SERVED),
    );
    expect(JSON.stringify(failed.find((l) => l.msg === NOT_SERVED))).to.match(/deadline/i);
    speech().kill("SIGCONT");
  });

  it("answers 503 without the address when the speech process is gone, and logs the address with the request id", async () => {
    speech().kill("SIGKILL");
    await new Promise((resolve) => speech().once("exit", resolve));
    const requestId = `gone-${Date.now()}`;
    // grpc-js may still be noticing the connection is gone: it answers 503 from then on.
    const res = await pollUntil(
      () =>
        new Api(system.baseUrl(), key.secret).request(
          "GET",
          "/api/v1/generation?id=gen-anything",
          undefined,
          { headers: { "x-request-id": requestId } },
        ),
      (r) => r.status === 503,
      20,
      100,
    );
    expectError(res, 503, /unavailable/i);
    expectNoLeaks(res.body.error.message);
    await sleep(100);
    const failed = linesOf(system.gateway.output(), requestId).filter((l) => l.msg === NOT_SERVED);
    // The log keeps grpc-js's own words (which the client never reads): usually the refused
    // address; while grpc-js is still noticing the process died, whatever it saw of the drop.
    expect(failed, "the gateway's line for this request").to.not.be.empty;
    const logged = failed.map((l) => (l.err as { message?: string } | undefined)?.message ?? "");
    for (const message of logged) {
      expect(message, "grpc-js's words, not the client's message").to.not.equal("");
      expect(message).to.not.equal(res.body.error.message);
    }
  });
});
