import { createClient } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { expect } from "chai";
import { AudioFormat } from "../../gen/railgate/speech/v1/speech_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { clipSeconds } from "../kit/fake-openai.js";
import { MODELS } from "../kit/speech-catalog.js";
import { PCM_TYPE, sentences, useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const MAX_CHUNK = 64 * 1024;
/** One sentence with no break in it: seconds of audio, which the engine streams in blocks. */
const ONE_LONG_SENTENCE = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");

describe("speech: streaming", () => {
  const h = useSpeechSystem();

  it("sends the first audio while the rest is still being synthesized", async function () {
    this.timeout(60_000);
    const res = await fetch(`${h.baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${h.key.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ model: MODELS.espeak, voice: "alloy", input: sentences(40) }),
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get("content-type")).to.equal(PCM_TYPE);
    const id = res.headers.get("x-generation-id") ?? "";
    const reader = res.body?.getReader();
    if (!reader) throw new Error("no body");

    const events: string[] = [];
    let bytes = 0;
    const first = await reader.read();
    expect(first.done).to.equal(false);
    bytes += first.value?.byteLength ?? 0;
    events.push("first chunk");
    // The record is written when the synthesis ends: it does not exist yet.
    const pending = await h.generation(id);
    events.push(pending.status === 404 ? "record pending" : "record already written");
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      events.push("chunk");
    }
    events.push("end");
    const record = await h.waitForGeneration(id);
    events.push(`record ${record.status}`);

    expect(events.slice(0, 2)).to.deep.equal(["first chunk", "record pending"]);
    expect(events.slice(-2)).to.deep.equal(["end", "record completed"]);
    expect(events.filter((e) => e === "chunk").length).to.be.above(20);
    expect(record.bytes).to.equal(bytes);
    // 40 sentences are minutes of audio: megabytes, not one buffered blob.
    expect(bytes).to.be.above(2_000_000);
  });

  describe("over gRPC", () => {
    let sessions: Http2SessionManager;
    let client: ReturnType<typeof createClient<typeof SpeechService>>;

    before(() => {
      const baseUrl = `http://127.0.0.1:${h.system.speechGrpcPort}`;
      sessions = new Http2SessionManager(baseUrl);
      client = createClient(
        SpeechService,
        createGrpcTransport({ baseUrl, sessionManager: sessions }),
      );
    });
    after(() => sessions?.abort());

    async function collect(req: Parameters<typeof client.synthesize>[0], secret = h.key.secret) {
      const messages = [];
      const headers = secret ? { authorization: `Bearer ${secret}` } : undefined;
      for await (const m of client.synthesize(req, { headers })) messages.push(m);
      return messages;
    }

    it("starts with the metadata, then audio in pieces of at most 64 KiB", async () => {
      const messages = await collect({
        model: MODELS.espeak,
        voice: "alloy",
        input: { case: "text", value: ONE_LONG_SENTENCE },
        responseFormat: AudioFormat.PCM,
      });
      const [start, ...rest] = messages;
      expect(start?.event.case).to.equal("start");
      const meta = start?.event.case === "start" ? start.event.value : undefined;
      expect(meta).to.include({
        format: AudioFormat.PCM,
        contentType: PCM_TYPE,
        sampleRate: 24000,
        channels: 1,
        model: MODELS.espeak,
        provider: "railgate",
      });
      expect(meta?.generationId).to.match(/^gen-/);

      const sizes = rest.map((m) => {
        expect(m.event.case).to.equal("audio");
        return m.event.case === "audio" ? m.event.value.byteLength : 0;
      });
      for (const s of sizes) expect(s).to.be.within(1, MAX_CHUNK);
      // Seconds of speech in one sentence: the engine streams it in blocks, not as one buffer.
      const total = sizes.reduce((a, b) => a + b, 0);
      expect(total / 48_000).to.be.above(5);
      expect(sizes.length).to.be.at.least(Math.floor(total / 48_000));
      const record = await h.waitForGeneration(meta?.generationId ?? "");
      expect(record.bytes).to.equal(total);
    });

    it("splits a provider's audio into pieces of at most 64 KiB as well", async () => {
      // A 20 s clip (960 000 bytes) that the provider writes in 4 large pieces.
      const input = "x".repeat(400);
      const messages = await collect({
        model: MODELS.basic,
        voice: "alloy",
        input: { case: "text", value: input },
      });
      expect(messages[0]?.event.case).to.equal("start");
      const sizes = messages
        .slice(1)
        .map((m) => (m.event.case === "audio" ? m.event.value.byteLength : -1));
      for (const s of sizes) expect(s).to.be.within(1, MAX_CHUNK);
      expect(sizes.reduce((a, b) => a + b, 0)).to.equal(Math.round(clipSeconds(input) * 24000) * 2);
    });

    it("serves only callers whose key resolves to a standard key", async () => {
      const call = (secret: string) =>
        collect(
          { model: MODELS.espeak, voice: "alloy", input: { case: "text", value: "Hi." } },
          secret,
        );
      for (const [secret, pattern] of [
        ["", /unauthenticated/i],
        ["not a key of ours", /unauthenticated/i],
        [MANAGEMENT_KEY, /permission_denied/i],
      ] as const) {
        let error: unknown;
        try {
          await call(secret);
        } catch (err) {
          error = err;
        }
        expect(String(error)).to.match(pattern);
      }
    });
  });
});
