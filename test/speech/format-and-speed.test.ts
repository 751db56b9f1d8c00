import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, PCM_TYPE, useSpeechSystem } from "../kit/speech-system.js";

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

    describe("wav", () => {
      /** OpenAI's streamed WAV header: sizes unknown (0xFFFFFFFF), PCM, mono, 24 kHz, 16-bit. */
      function expectWavHeader(bytes: Buffer): void {
        expect(bytes.subarray(0, 4).toString("latin1")).to.equal("RIFF");
        expect(bytes.readUInt32LE(4)).to.equal(0xffffffff);
        expect(bytes.subarray(8, 16).toString("latin1")).to.equal("WAVEfmt ");
        expect(bytes.readUInt32LE(16)).to.equal(16);
        expect(bytes.readUInt16LE(20)).to.equal(1);
        expect(bytes.readUInt16LE(22)).to.equal(1);
        expect(bytes.readUInt32LE(24)).to.equal(24000);
        expect(bytes.readUInt32LE(28)).to.equal(48000);
        expect(bytes.readUInt16LE(32)).to.equal(2);
        expect(bytes.readUInt16LE(34)).to.equal(16);
        expect(bytes.subarray(36, 40).toString("latin1")).to.equal("data");
        expect(bytes.readUInt32LE(40)).to.equal(0xffffffff);
      }

      it("answers the engine's speech as audio/wav: one header, then the pcm", async () => {
        const wav = await h.speak({
          model: MODELS.espeak,
          voice: "alloy",
          input: TEXT,
          response_format: "wav",
        });
        expectAudio(wav, "audio/wav");
        expectWavHeader(wav.bytes);
        // Whole 16-bit samples after the header, and no second header inside the stream.
        expect((wav.bytes.byteLength - 44) % 2).to.equal(0);
        expect(wav.bytes.indexOf("RIFF", 4, "latin1")).to.equal(-1);
        const record = await h.waitForGeneration(wav.headers.get("x-generation-id") ?? "");
        expect(record.response_format).to.equal("wav");
        // The samples after the header are the speech the record measured.
        expect(record.duration_seconds).to.be.closeTo((wav.bytes.byteLength - 44) / 48000, 0.001);
        expect(record.bytes).to.equal(wav.bytes.byteLength);
      });

      it("asks a provider for pcm and puts the header before its bytes", async () => {
        const wav = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: TEXT,
          response_format: "wav",
        });
        expectAudio(wav, "audio/wav");
        expect(h.fakes.acme.requests[0]?.body.response_format).to.equal("pcm");
        expectWavHeader(wav.bytes);
        const pcm = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT });
        expect(wav.bytes.subarray(44).equals(pcm.bytes)).to.equal(true);
      });
    });

    describe("stream_format", () => {
      it('takes "audio" (and null): the raw audio stream', async () => {
        for (const stream_format of ["audio", null]) {
          const res = await h.speak({
            model: MODELS.espeak,
            voice: "alloy",
            input: TEXT,
            stream_format,
          });
          expectAudio(res, PCM_TYPE);
        }
      });

      it('refuses "sse" by name (400), before any provider is asked', async () => {
        const res = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: TEXT,
          stream_format: "sse",
        });
        expectError(res, 400, /stream_format "sse" is not supported/);
        expect(h.fakes.acme.requests).to.be.empty;
      });

      for (const value of ["SSE", "", 1, true]) {
        it(`is 400 for stream_format ${JSON.stringify(value)}`, async () => {
          const res = await h.speak({
            model: MODELS.espeak,
            voice: "alloy",
            input: TEXT,
            stream_format: value,
          });
          expectError(res, 400, /stream_format/);
        });
      }
    });

    for (const format of ["opus", "WAV", "MP3", "", 3, null]) {
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
