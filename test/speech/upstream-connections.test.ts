import { expect } from "chai";
import { parseCatalog } from "../../services/speech/catalog/load-catalog.js";
import { OpenAiCompatibleAdapter } from "../../services/speech/engines/openai-compatible/adapter.js";
import type { AdapterRequest } from "../../services/speech/engines/types.js";
import { clipSeconds, FakeOpenAi } from "../kit/fake-openai.js";
import { sleep } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

/** Polls (a bounded number of times, no time asserted) until `done` holds. */
async function eventually(done: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await sleep(10);
  expect(done(), what).to.equal(true);
}

describe("speech: upstream connections", () => {
  describe("through the gateway", () => {
    const h = useSpeechSystem();

    it("reuses one keep-alive connection to a provider for sequential requests", async () => {
      const before = h.fakes.acme.connections;
      for (let i = 0; i < 5; i++) {
        expectAudio(await h.speak({ model: MODELS.basic, voice: "alloy", input: `Turn ${i}.` }));
      }
      expect(h.fakes.acme.requests).to.have.length(5);
      for (const r of h.fakes.acme.requests) expect(await r.outcome).to.equal("finished");
      // At most one new connection: the first request may open it, the next four reuse it.
      expect(h.fakes.acme.connections - before).to.be.at.most(1);
    });
  });

  describe("the adapter on its own", () => {
    const INPUT = "A clip read by a slow consumer.";
    let fake: FakeOpenAi;
    let adapter: OpenAiCompatibleAdapter | undefined;

    beforeEach(async () => {
      fake = await new FakeOpenAi({ chunks: 4 }).start();
    });
    afterEach(async () => {
      await adapter?.close();
      adapter = undefined;
      await fake.close();
    });

    function request(signal = new AbortController().signal): AdapterRequest {
      const catalog = parseCatalog({
        providers: { fake: { base_url: fake.baseUrl } },
        models: [
          {
            id: "fake/tts",
            name: "fake",
            description: "fake",
            voices: ["alloy"],
            endpoints: [
              {
                provider: "fake",
                adapter: "openai-compatible",
                price_per_million_chars: 1,
                capabilities: { speed: true },
                data_policy: { zero_data_retention: true },
                formats: ["mp3", "wav", "pcm"],
              },
            ],
          },
        ],
      });
      const model = catalog.models[0];
      const endpoint = model?.endpoints[0];
      if (!model || !endpoint) throw new Error("the catalog has no fake/tts endpoint");
      return {
        model,
        endpoint,
        segments: [{ text: INPUT, voice: "alloy" }],
        speed: 1,
        format: "pcm",
        references: [],
        signal,
      };
    }

    async function readAll(bytes: AsyncIterable<Uint8Array>, pauseMs = 0): Promise<number> {
      let n = 0;
      for await (const piece of bytes) {
        n += piece.byteLength;
        if (pauseMs) await sleep(pauseMs);
      }
      return n;
    }

    it("closes its idle connections to the provider on close()", async () => {
      adapter = new OpenAiCompatibleAdapter(
        "fake",
        { adapter: "openai-compatible", base_url: fake.baseUrl, timeout_ms: 5_000 },
        {},
      );
      const out = await adapter.start(request());
      if (out.kind !== "encoded") throw new Error("expected encoded bytes");
      await readAll(out.bytes);
      expect(fake.openConnections, "kept alive after the response").to.equal(1);
      await adapter.close();
      await eventually(() => fake.openConnections === 0, "the connection was closed");
    });

    it("times out only while waiting on the provider, never while its consumer is busy", async () => {
      // 4 pieces, each held by the consumer longer than the provider's whole time-out.
      adapter = new OpenAiCompatibleAdapter(
        "fake",
        { adapter: "openai-compatible", base_url: fake.baseUrl, timeout_ms: 200 },
        {},
      );
      const out = await adapter.start(request());
      if (out.kind !== "encoded") throw new Error("expected encoded bytes");
      const bytes = await readAll(out.bytes, 250);
      expect(bytes).to.equal(Math.round(clipSeconds(INPUT) * 24_000) * 2);
    });

    it("aborts the provider's response when the caller's signal fires mid-clip", async () => {
      await fake.close();
      fake = await new FakeOpenAi({ chunks: 40, chunkDelayMs: 20 }).start();
      adapter = new OpenAiCompatibleAdapter(
        "fake",
        { adapter: "openai-compatible", base_url: fake.baseUrl, timeout_ms: 5_000 },
        {},
      );
      const abort = new AbortController();
      const out = await adapter.start(request(abort.signal));
      if (out.kind !== "encoded") throw new Error("expected encoded bytes");
      const reading = readAll(out.bytes).then(
        () => "ended",
        (err: unknown) => err,
      );
      await eventually(() => (fake.requests[0]?.chunksSent ?? 0) > 0, "audio started");
      const reason = new Error("client went away");
      abort.abort(reason);
      expect(await reading).to.equal(reason);
      expect(await fake.requests[0]?.outcome).to.equal("closed-early");
      expect(fake.requests[0]?.chunksSent).to.be.below(40);
    });
  });
});
