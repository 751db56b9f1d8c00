import { expect } from "chai";
import OpenAI from "openai";
import { decodeMp3, pcmSamples, pcmSeconds, rms, sineTone } from "../kit/audio.js";
import { clipSeconds } from "../kit/fake-openai.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, PCM_TYPE, useSpeechSystem } from "../kit/speech-system.js";

const TEXT = "The quick brown fox jumps over the lazy dog. Then it naps in the warm afternoon sun.";

describe("speech: real audio", () => {
  const h = useSpeechSystem();
  const idOf = (res: { headers: Headers }) => res.headers.get("x-generation-id") ?? "";

  describe("from the embedded engine", () => {
    let pcm: Buffer;
    let pcmDuration = 0;

    before(async () => {
      const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: TEXT });
      expectAudio(res, PCM_TYPE);
      pcm = res.bytes;
      pcmDuration = pcmSeconds(pcm);
      const record = await h.waitForGeneration(idOf(res));
      expect(record.duration_seconds).to.be.closeTo(pcmDuration, 1e-6);
      expect(record.bytes).to.equal(pcm.byteLength);
    });

    it("is whole 16-bit samples of speech, as long as the text needs", () => {
      expect(pcm.byteLength % 2).to.equal(0);
      expect(rms(pcmSamples(pcm), 32768)).to.be.above(0.02);
      // About 15 characters a second at the neutral speed: allow a wide band.
      const chars = TEXT.length;
      expect(pcmDuration).to.be.within(chars / 40, chars / 5);
    });

    it("is mp3 at 24 kHz that decodes to about the same duration as the pcm", async () => {
      const res = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expectAudio(res, "audio/mpeg");
      const decoded = await decodeMp3(res.bytes);
      expect(decoded.errors).to.equal(0);
      expect(decoded.sampleRate).to.equal(24000);
      expect(rms(decoded.samples)).to.be.above(0.02);
      expect(decoded.seconds).to.be.closeTo(pcmDuration, pcmDuration * 0.1);
      // eSpeak's timing varies by a few samples from run to run, and MP3 adds encoder padding.
      const record = await h.waitForGeneration(idOf(res));
      expect(record.duration_seconds).to.be.closeTo(decoded.seconds, 0.1);
      expect(record.duration_seconds).to.be.closeTo(pcmDuration, pcmDuration * 0.02);
    });

    it("is decodable mp3 when fetched with the official openai client", async () => {
      const client = new OpenAI({
        apiKey: h.key.secret,
        baseURL: `${h.baseUrl}/api/v1`,
        maxRetries: 0,
      });
      const res = await client.audio.speech.create({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expect(res.headers.get("content-type")).to.equal("audio/mpeg");
      const bytes = Buffer.from(await res.arrayBuffer());
      const decoded = await decodeMp3(bytes);
      expect(decoded.sampleRate).to.equal(24000);
      expect(rms(decoded.samples)).to.be.above(0.02);
      expect(decoded.seconds).to.be.closeTo(pcmDuration, pcmDuration * 0.1);
    });
  });

  describe("from a provider", () => {
    it("relays pcm byte for byte", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT });
      expectAudio(res, PCM_TYPE);
      const tone = sineTone(clipSeconds(TEXT));
      expect(res.bytes.equals(Buffer.from(tone.buffer, tone.byteOffset, tone.byteLength))).to.equal(
        true,
      );
      const record = await h.waitForGeneration(idOf(res));
      expect(record.duration_seconds).to.be.closeTo(pcmSeconds(res.bytes), 1e-6);
    });

    it("relays mp3 that decodes to the provider's clip, and records its duration", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expectAudio(res, "audio/mpeg");
      const decoded = await decodeMp3(res.bytes);
      expect(decoded.sampleRate).to.equal(24000);
      expect(rms(decoded.samples)).to.be.above(0.1);
      const seconds = clipSeconds(TEXT);
      expect(decoded.seconds).to.be.closeTo(seconds, seconds * 0.1);
      const record = await h.waitForGeneration(idOf(res));
      expect(record.duration_seconds).to.be.closeTo(seconds, seconds * 0.1);
    });
  });
});
