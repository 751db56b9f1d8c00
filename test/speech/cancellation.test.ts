import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { expect } from "chai";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { clipSeconds } from "../kit/fake-openai.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, sentences, useSpeechSystem } from "../kit/speech-system.js";

const LONG_TEXT = sentences(20);
/** Long enough for the slow provider to stream many pieces. */
const SLOW_TEXT = "A long clip from a provider that takes its time. ".repeat(4);

describe("speech: cancellation", () => {
  const h = useSpeechSystem();

  /** Starts a synthesis, reads its first chunk, then hangs up; returns the generation id. */
  async function startThenAbort(body: Record<string, unknown>): Promise<string> {
    const abort = new AbortController();
    const res = await fetch(`${h.baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key.secret}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: abort.signal,
    });
    expect(res.status).to.equal(200);
    const reader = res.body?.getReader();
    const first = await reader?.read();
    expect(first?.done).to.equal(false);
    abort.abort();
    return res.headers.get("x-generation-id") ?? "";
  }

  it("stops the embedded engine when the client goes away", async function () {
    this.timeout(60_000);
    const full = await h.speak({ model: MODELS.espeak, voice: "alloy", input: LONG_TEXT });
    expectAudio(full);
    const id = await startThenAbort({ model: MODELS.espeak, voice: "alloy", input: LONG_TEXT });
    const record = await h.waitForGeneration(id);
    expect(record.status).to.equal("cancelled");
    expect(record.bytes).to.be.above(0);
    expect(record.bytes).to.be.below(full.bytes.byteLength);
    // The engine's workers are free again: the next request is served in full.
    const after = await h.speak({ model: MODELS.espeak, voice: "alloy", input: "Still here." });
    expectAudio(after);
  });

  it("records a gRPC stream cancelled while the service is blocked writing to it", async function () {
    this.timeout(60_000);
    const baseUrl = `http://127.0.0.1:${h.system.speechGrpcPort}`;
    const sessions = new Http2SessionManager(baseUrl);
    const client = createClient(
      SpeechService,
      createGrpcTransport({ baseUrl, sessionManager: sessions }),
    );
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        const abort = new AbortController();
        const call = client
          .synthesize(
            {
              model: MODELS.espeak,
              voice: "alloy",
              input: { case: "text", value: LONG_TEXT },
            },
            { signal: abort.signal, headers: { authorization: `Bearer ${h.key.secret}` } },
          )
          [Symbol.asyncIterator]();
        const start = await call.next();
        const id = start.value?.event.case === "start" ? start.value.event.value.generationId : "";
        expect((await call.next()).value?.event.case).to.equal("audio");
        // Not a timing assertion: the pause lets the service fill the stream's flow-control
        // window and block in a write, the moment at which Connect stops driving a stream
        // whose client resets it (and never returns it).
        await new Promise((r) => setTimeout(r, 300));
        abort.abort();
        await call.next().catch(() => undefined);
        const record = await h.waitForGeneration(id);
        expect(record.status).to.equal("cancelled");
      }
    } finally {
      sessions.abort();
    }
  });

  it("closes the provider's connection when the client goes away", async function () {
    this.timeout(30_000);
    const id = await startThenAbort({ model: MODELS.slow, voice: "alloy", input: SLOW_TEXT });
    const [req] = h.fakes.slow.requests;
    expect(req, "the provider got the request").to.exist;
    expect(await req?.outcome).to.equal("closed-early");
    expect(req?.chunksSent).to.be.below(60);
    const record = await h.waitForGeneration(id);
    expect(record.status).to.equal("cancelled");
    expect(record.bytes).to.be.below(Math.round(clipSeconds(SLOW_TEXT) * 24000) * 2);
  });

  it("asks for no further turn once the client has gone", async function () {
    this.timeout(30_000);
    const id = await startThenAbort({
      model: MODELS.slow,
      voice: "alloy",
      input: [{ text: SLOW_TEXT }, { text: "Never requested.", voice: "echo" }],
    });
    const [first] = h.fakes.slow.requests;
    expect(await first?.outcome).to.equal("closed-early");
    const record = await h.waitForGeneration(id);
    expect(record.status).to.equal("cancelled");
    expect(h.fakes.slow.requests.map((r) => r.body.input)).to.deep.equal([SLOW_TEXT]);
  });
});
