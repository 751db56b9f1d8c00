import { expect } from "chai";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

const DATA_POLICY_404 =
  /^No endpoints available matching your guardrail restrictions and data policy$/;
const TEXT = "Provider routing test.";

describe("speech: instructions and provider preferences", () => {
  const h = useSpeechSystem();

  describe("instructions", () => {
    it("reach a provider that supports them", async () => {
      const res = await h.speak({
        model: MODELS.steerable,
        voice: "alloy",
        input: TEXT,
        instructions: "Whisper, slowly.",
      });
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.instructions).to.equal("Whisper, slowly.");
    });

    it("are not sent to a provider without them (and do not fail the request)", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        instructions: "Whisper, slowly.",
      });
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body).not.to.have.property("instructions");
    });

    it("of a turn override the request's, per turn", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "alice",
        instructions: "Calm.",
        input: [{ text: "One." }, { text: "Two!", voice: "bob", instructions: "Excited!" }],
      });
      expectAudio(res);
      expect(h.fakes.acme.requests.map((r) => r.body.instructions)).to.deep.equal([
        "Calm.",
        "Excited!",
      ]);
    });

    it(`take ${SPEECH_LIMITS.maxInstructionsChars} characters and are 400 beyond, also in a turn`, async () => {
      const max = "a".repeat(SPEECH_LIMITS.maxInstructionsChars);
      const ok = await h.speak({
        model: MODELS.steerable,
        voice: "alloy",
        input: TEXT,
        instructions: max,
      });
      expectAudio(ok);
      const over = await h.speak({
        model: MODELS.steerable,
        voice: "alloy",
        input: TEXT,
        instructions: `${max}b`,
      });
      expectError(over, 400, /instructions/);
      const turn = await h.speak({
        model: MODELS.dialogue,
        voice: "alice",
        input: [{ text: "Hi.", instructions: `${max}b` }],
      });
      expectError(turn, 400, /input\[0\]\.instructions/);
      expect(h.fakes.acme.requests).to.have.length(1);
    });

    it("must be a string", async () => {
      const res = await h.speak({
        model: MODELS.steerable,
        voice: "alloy",
        input: TEXT,
        instructions: ["loud"],
      });
      expectError(res, 400, /instructions/);
    });
  });

  describe("provider.zdr and provider.data_collection", () => {
    it("is 404 with the data-policy message when no endpoint is zero-data-retention", async () => {
      const res = await h.speak({
        model: MODELS.leaky,
        voice: "alloy",
        input: TEXT,
        provider: { zdr: true },
      });
      expectError(res, 404, DATA_POLICY_404);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 404 with the data-policy message when every endpoint trains on data and collection is denied", async () => {
      const res = await h.speak({
        model: MODELS.leaky,
        voice: "alloy",
        input: TEXT,
        provider: { data_collection: "deny" },
      });
      expectError(res, 404, DATA_POLICY_404);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("serves the same model when the request does not ask for them", async () => {
      for (const provider of [{}, { zdr: false }, { data_collection: "allow" }, null]) {
        const res = await h.speak({ model: MODELS.leaky, voice: "alloy", input: TEXT, provider });
        expectAudio(res);
      }
    });

    it("serves zero-data-retention models under both", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        provider: { zdr: true, data_collection: "deny" },
      });
      expectAudio(res);
      const engine = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: TEXT,
        provider: { zdr: true, data_collection: "deny" },
      });
      expectAudio(engine);
    });

    it("skips the endpoints that do not qualify", async () => {
      const res = await h.speak({
        model: MODELS.shared,
        voice: "alloy",
        input: TEXT,
        provider: { zdr: true },
      });
      expectAudio(res);
      expect(res.headers.get("x-railgate-provider")).to.equal("backup");
      expect(h.fakes.acme.requests).to.be.empty;
      expect(h.fakes.backup.requests).to.have.length(1);
    });
  });

  describe("provider.options", () => {
    const options = {
      acme: { stream_format: "audio", seed: 7, acme_only: { nested: [1, 2] } },
      backup: { backup_only: true },
    };

    it("passes only the chosen provider's options, and only to it", async () => {
      const res = await h.speak({
        model: MODELS.shared,
        voice: "alloy",
        input: TEXT,
        provider: { options },
      });
      expectAudio(res);
      expect(res.headers.get("x-railgate-provider")).to.equal("acme");
      const body = h.fakes.acme.requests[0]?.body;
      expect(body).to.include({ stream_format: "audio", seed: 7 });
      expect(body.acme_only).to.deep.equal({ nested: [1, 2] });
      expect(body).not.to.have.property("backup_only");
      expect(JSON.stringify(body)).not.to.include("backup_only");
      expect(h.fakes.backup.requests).to.be.empty;
    });

    it("follows the route: the other provider's options when it is the one chosen", async () => {
      const res = await h.speak({
        model: MODELS.shared,
        voice: "alloy",
        input: TEXT,
        provider: { zdr: true, options },
      });
      expectAudio(res);
      expect(res.headers.get("x-railgate-provider")).to.equal("backup");
      const body = h.fakes.backup.requests[0]?.body;
      expect(body).to.include({ backup_only: true });
      for (const k of ["stream_format", "seed", "acme_only"]) expect(body).not.to.have.property(k);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("never override the request's own fields", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        response_format: "mp3",
        provider: {
          options: {
            acme: { model: "other", input: "hijacked", voice: "onyx", response_format: "pcm" },
          },
        },
      });
      expectAudio(res, "audio/mpeg");
      expect(h.fakes.acme.requests[0]?.body).to.include({
        model: "tts-basic",
        input: TEXT,
        voice: "alloy",
        response_format: "mp3",
      });
    });

    it("is 400 when a provider's options are not an object", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        provider: { options: { acme: "fast" } },
      });
      expectError(res, 400, /provider\.options\.acme/);
    });
  });

  describe("the provider object", () => {
    for (const [what, provider, field] of [
      ["an unknown key", { require_parameters: true }, /provider\.require_parameters/],
      ["a zdr that is not a boolean", { zdr: "yes" }, /provider\.zdr/],
      ["an unknown data_collection", { data_collection: "sometimes" }, /provider\.data_collection/],
      ["options that are not an object", { options: [] }, /provider\.options/],
    ] as const) {
      it(`is 400 for ${what}, naming it`, async () => {
        const res = await h.speak({ model: MODELS.basic, voice: "alloy", input: TEXT, provider });
        expectError(res, 400, field);
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("is 400 when it is not an object", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: TEXT,
        provider: "acme",
      });
      expectError(res, 400, /provider/);
    });
  });
});
