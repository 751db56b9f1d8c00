import { expect } from "chai";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

/** Small, so a body over it is cheap to send; an input at the character limit still fits. */
const MAX_BODY = 48 * 1024;

describe("speech: model, body, limits and authentication", () => {
  const h = useSpeechSystem({ maxSpeechBodyBytes: MAX_BODY });

  describe("model", () => {
    it("is 404 when unknown", async () => {
      const res = await h.speak({ model: "acme/no-such-model", voice: "alloy", input: "Hi." });
      expectError(res, 404, /acme\/no-such-model/);
    });

    it("is 400 when missing or empty", async () => {
      expectError(await h.speak({ voice: "alloy", input: "Hi." }), 400, /model/);
      expectError(await h.speak({ model: "", voice: "alloy", input: "Hi." }), 400, /model/);
      expectError(await h.speak({ model: 3, voice: "alloy", input: "Hi." }), 400, /model/);
    });

    it("is found by an alias of the catalog", async () => {
      const res = await h.speak({ model: "espeak-ng", voice: "alloy", input: "Alias." });
      expectAudio(res);
      expect(res.headers.get("x-railgate-model")).to.equal(MODELS.espeak);
    });
  });

  describe("the body", () => {
    for (const field of ["stream", "temperature", "sessionId", "Voice"]) {
      it(`is 400 for the unknown field "${field}", naming it`, async () => {
        const res = await h.speak({
          model: MODELS.basic,
          voice: "alloy",
          input: "Hi.",
          [field]: 1,
        });
        expectError(res, 400, new RegExp(`"${field}"`));
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("is 400 when it is not JSON, or not an object", async () => {
      expectError(await h.speak("{not json"), 400);
      expectError(await h.speak("[1,2]"), 400);
      expectError(await h.speak(""), 400);
    });

    it(`takes an input of ${SPEECH_LIMITS.maxInputChars} characters, and answers 413 beyond`, async () => {
      const atLimit = "a".repeat(SPEECH_LIMITS.maxInputChars);
      const ok = await h.speak({ model: MODELS.basic, voice: "alloy", input: atLimit });
      expectAudio(ok);
      expect(h.fakes.acme.requests[0]?.body.input).to.equal(atLimit);

      const over = await h.speak({ model: MODELS.basic, voice: "alloy", input: `${atLimit}b` });
      expectError(over, 413, /input is too long/);
      expect(h.fakes.acme.requests).to.have.length(1);
    });

    it("counts characters, not bytes, toward the input limit", async () => {
      // Two UTF-16 code units and four UTF-8 bytes each, but one character.
      const emoji = "🎵".repeat(SPEECH_LIMITS.maxInputChars);
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: emoji });
      expectAudio(res);
      const record = await h.waitForGeneration(res.headers.get("x-generation-id") ?? "");
      expect(record.characters).to.equal(SPEECH_LIMITS.maxInputChars);
    });

    it("answers 413 when the turns together are over the input limit", async () => {
      const half = "a".repeat(SPEECH_LIMITS.maxInputChars / 2);
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "alice",
        input: [{ text: half }, { text: half }, { text: "one more" }],
      });
      expectError(res, 413, /input is too long/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("answers 413 for a body over the speech body limit", async () => {
      const big = "x".repeat(MAX_BODY);
      const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: "Hi.", user: big });
      expectError(res, 413);
      expect(h.fakes.acme.requests).to.be.empty;
    });
  });

  describe("authentication", () => {
    const body = { model: MODELS.espeak, voice: "alloy", input: "Who am I?" };

    it("is 401 without a key", async () => {
      expectError(await h.speak(body, { key: null }), 401);
    });

    it("is 401 with a key that does not exist", async () => {
      expectError(await h.speak(body, { key: "rg-not-a-real-key-0000000000000000" }), 401);
    });

    it("is 403 with the management key", async () => {
      expectError(await h.speak(body, { key: MANAGEMENT_KEY }), 403);
    });

    it("serves a standard key", async () => {
      expectAudio(await h.speak(body));
    });
  });
});
