import { expect } from "chai";
import { MODELS } from "./support/catalog.js";
import { expectAudio, expectError, PCM_TYPE, useSpeechSystem } from "./support/speech-system.js";

const TEXT = "The quick brown fox jumps over the lazy dog.";

describe("speech: response_format and speed", () => {
  const h = useSpeechSystem();

  describe("response_format", () => {
    it("defaults to pcm: 16-bit mono at 24 kHz", async () => {
      const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: TEXT });
      expectAudio(res, PCM_TYPE);
      const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
      expect(record.response_format).to.equal("pcm");
    });

    it("asks the provider for pcm when none is given", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT });
      expectAudio(res, PCM_TYPE);
      expect(h.fakes.acme.requests[0]?.body.response_format).to.equal("pcm");
    });

    it("answers mp3 as audio/mpeg, from the engine and from a provider", async () => {
      const engine = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expectAudio(engine, "audio/mpeg");
      const upstream = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expectAudio(upstream, "audio/mpeg");
      expect(h.fakes.acme.requests[0]?.body.response_format).to.equal("mp3");
      const record = await h.waitForGeneration(upstream.headers.get("x-generation-id") ?? "");
      expect(record.response_format).to.equal("mp3");
    });

    it("takes pcm explicitly", async () => {
      const res = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: "pcm",
      });
      expectAudio(res, PCM_TYPE);
    });

    for (const format of ["wav", "opus", "MP3", "", 3, null]) {
      it(`is 400 for response_format ${JSON.stringify(format)}`, async () => {
        const res = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: TEXT,
          response_format: format,
        });
        expectError(res, 400, /response_format/);
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }
  });

  describe("speed", () => {
    for (const speed of [0.25, 1.5, 4]) {
      it(`passes speed ${speed} to a provider with speed control`, async () => {
        const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, speed });
        expectAudio(res);
        expect(h.fakes.acme.requests[0]?.body.speed).to.equal(speed);
      });
    }

    it("sends no speed to the provider when it is the neutral 1, or omitted", async () => {
      for (const body of [{ speed: 1 }, {}, { speed: null }]) {
        h.fakes.acme.reset();
        const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, ...body });
        expectAudio(res);
        expect(h.fakes.acme.requests[0]?.body).not.to.have.property("speed");
      }
    });

    for (const speed of [0.24, 0, -1, 4.01, 10]) {
      it(`is 400 for speed ${speed} (outside 0.25..4)`, async () => {
        const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, speed });
        expectError(res, 400, /speed/);
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("is 400 for a speed that is not a number", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, speed: "2" });
      expectError(res, 400, /speed/);
    });

    it("is 400 for a non-default speed on a model without speed control", async () => {
      const res = await h.speak({
        model: MODELS.fixedSpeed,
        voice: "alloy",
        input: TEXT,
        speed: 1.25,
      });
      expectError(res, 400, /speed.*acme\/tts-fixed-speed|acme\/tts-fixed-speed.*speed/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("accepts the neutral speed on a model without speed control, and sends none", async () => {
      const res = await h.speak({
        model: MODELS.fixedSpeed,
        voice: "alloy",
        input: TEXT,
        speed: 1,
      });
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body).not.to.have.property("speed");
    });

    it("changes how long the embedded engine speaks", async () => {
      const lengths: number[] = [];
      for (const speed of [0.5, 1, 2]) {
        const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: TEXT, speed });
        expectAudio(res, PCM_TYPE);
        lengths.push(res.bytes.byteLength);
        const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
        expect(record.speed).to.equal(speed);
      }
      const [slow, normal, fast] = lengths as [number, number, number];
      expect(slow).to.be.above(normal * 1.3);
      expect(fast).to.be.below(normal / 1.3);
    });
  });
});
