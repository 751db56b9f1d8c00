import { expect } from "chai";
import { AUDIO_FORMAT_NAMES, audioContentType } from "../../domain/audio-formats.js";
import { expectError } from "../kit/expect.js";
import { decodeWithFfmpeg, FFMPEG_NAMES } from "../kit/ffmpeg.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const TEXT = "Every format OpenAI offers. Decoded by ffmpeg, sentence by sentence.";

describe("speech: every OpenAI response_format", () => {
  const h = useSpeechSystem();

  describe("from the embedded engine", () => {
    for (const format of AUDIO_FORMAT_NAMES) {
      it(`${format}: served as ${audioContentType(format)}, and ffmpeg decodes all of it`, async () => {
        const res = await h.speak({
          model: MODELS.espeak,
          voice: "alloy",
          input: TEXT,
          response_format: format,
        });
        expectAudio(res, audioContentType(format));
        const decoded = await decodeWithFfmpeg(res.bytes, format);
        expect(decoded.codec).to.equal(FFMPEG_NAMES[format].codec);
        expect(decoded.container).to.equal(FFMPEG_NAMES[format].container);
        expect(decoded.channels).to.equal(1);
        const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
        expect(record.response_format).to.equal(format);
        expect(record.bytes).to.equal(res.bytes.byteLength);
        // The record's duration is the engine's audio; the decoded stream holds it (codecs pad
        // to whole frames, and AAC adds its priming samples).
        expect(record.duration_seconds).to.be.above(1);
        expect(decoded.seconds).to.be.within(
          record.duration_seconds - 0.01,
          record.duration_seconds + 0.2,
        );
      });
    }
  });

  describe("routing by the formats endpoints declare", () => {
    for (const format of ["opus", "aac", "flac"] as const) {
      it(`${format}: skips the preferred endpoint that cannot produce it, for one that can`, async () => {
        const res = await h.speak({
          model: MODELS.formats,
          voice: "alloy",
          input: TEXT,
          response_format: format,
        });
        expectAudio(res, audioContentType(format));
        expect(res.headers.get("x-railgate-provider")).to.equal("backup");
        expect(h.fakes.acme.requests).to.be.empty;
        // Asked for the format itself, and relayed as the provider made it.
        expect(h.fakes.backup.requests[0]?.body.response_format).to.equal(format);
        const decoded = await decodeWithFfmpeg(res.bytes, format);
        expect(decoded.codec).to.equal(FFMPEG_NAMES[format].codec);
      });
    }

    it("keeps the preferred endpoint for a format both produce", async () => {
      const res = await h.speak({
        model: MODELS.formats,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
      });
      expectAudio(res, "audio/mpeg");
      expect(res.headers.get("x-railgate-provider")).to.equal("acme");
      expect(h.fakes.backup.requests).to.be.empty;
    });
  });

  describe("a format no endpoint of the model produces", () => {
    for (const format of ["opus", "aac", "flac"] as const) {
      it(`${format}: 400 naming the formats the model offers, before any provider is asked`, async () => {
        const res = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: TEXT,
          response_format: format,
        });
        expectError(
          res,
          400,
          new RegExp(
            `^response_format "${format}" is not offered by model acme/tts-basic: it offers "mp3", "wav" or "pcm"$`,
          ),
        );
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("an unknown format: 400 naming all six", async () => {
      const res = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        response_format: "ogg",
      });
      expectError(res, 400, /"mp3", "opus", "aac", "flac", "wav" or "pcm"/);
    });
  });
});
