import { expect } from "chai";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { expectError } from "../kit/expect.js";
import { clipSeconds } from "../kit/fake-openai.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, PCM_TYPE, useSpeechSystem } from "../kit/speech-system.js";

describe("speech: input and voice", () => {
  const h = useSpeechSystem();

  describe("input as a string", () => {
    it("speaks it on the embedded engine", async () => {
      const res = await h.speak({ model: MODELS.espeak, voice: "alloy", input: "Hello world." });
      expectAudio(res, PCM_TYPE);
    });

    it("sends it to the provider as one request", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "echo", input: "One request." });
      expectAudio(res);
      expect(h.fakes.acme.requests.map((r) => r.body.input)).to.deep.equal(["One request."]);
      expect(h.fakes.acme.requests[0]?.body.voice).to.equal("echo");
    });

    for (const [what, input] of [
      ["missing", undefined],
      ["null", null],
      ["empty", ""],
      ["blank", "   \n "],
      ["a number", 42],
      ["an object", { text: "hi" }],
    ] as const) {
      it(`rejects input that is ${what} with 400`, async () => {
        const res = await h.speak({ model: MODELS.basic, voice: "alloy", input });
        expectError(res, 400, /input/);
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }
  });

  describe("input as turns", () => {
    it("is 400 on a model without multi-speaker input", async () => {
      const res = await h.speak({
        model: MODELS.basic,
        voice: "alloy",
        input: [{ text: "Hi." }, { text: "Hello." }],
      });
      expectError(res, 400, /multi-speaker/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("reaches the provider as one request per turn, in order, each with its own voice", async () => {
      const turns = [
        { text: "First, from Alice.", voice: "alice" },
        { text: "Second, in the default voice." },
        { text: "Third, from Carol.", voice: "carol" },
      ];
      const res = await h.speak({ model: MODELS.dialogue, voice: "bob", input: turns });
      expectAudio(res, PCM_TYPE);
      const seen = h.fakes.acme.requests.map((r) => [r.body.input, r.body.voice]);
      expect(seen).to.deep.equal([
        ["First, from Alice.", "alice"],
        ["Second, in the default voice.", "bob"],
        ["Third, from Carol.", "carol"],
      ]);
      // The answer is every turn's audio, one after another.
      const expectedBytes = turns
        .map((t) => Math.round(clipSeconds(t.text) * 24000) * 2)
        .reduce((a, b) => a + b, 0);
      expect(res.bytes.byteLength).to.equal(expectedBytes);
    });

    it("speaks turns on the embedded engine, which is multi-speaker", async () => {
      const res = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: [{ text: "One." }, { text: "Two.", voice: "en-gb" }],
      });
      expectAudio(res, PCM_TYPE);
    });

    it("is 400 for a turn without text, naming the turn", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "bob",
        input: [{ text: "Fine." }, { voice: "alice" }],
      });
      expectError(res, 400, /input\[1\]\.text/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 for a turn whose text is empty", async () => {
      const res = await h.speak({ model: MODELS.dialogue, voice: "bob", input: [{ text: " " }] });
      expectError(res, 400, /input\[0\]\.text/);
    });

    it("is 400 for an empty array of turns", async () => {
      const res = await h.speak({ model: MODELS.dialogue, voice: "bob", input: [] });
      expectError(res, 400, /input/);
    });

    it(`takes ${SPEECH_LIMITS.maxTurns} turns and is 400 beyond`, async () => {
      const turns = (n: number) => Array.from({ length: n }, (_, i) => ({ text: `Turn ${i}.` }));
      const over = await h.speak({
        model: MODELS.dialogue,
        voice: "bob",
        input: turns(SPEECH_LIMITS.maxTurns + 1),
      });
      expectError(over, 400, new RegExp(`at most ${SPEECH_LIMITS.maxTurns} turns`));
      expect(h.fakes.acme.requests).to.be.empty;
      const ok = await h.speak({
        model: MODELS.dialogue,
        voice: "bob",
        input: turns(SPEECH_LIMITS.maxTurns),
      });
      expectAudio(ok);
      expect(h.fakes.acme.requests).to.have.length(SPEECH_LIMITS.maxTurns);
    });

    it("is 400 for a turn that is not an object", async () => {
      const res = await h.speak({ model: MODELS.dialogue, voice: "bob", input: ["hello"] });
      expectError(res, 400, /input\[0\]/);
    });

    it("is 400 for an unknown field in a turn, naming it", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "bob",
        input: [{ text: "Hi.", speaker: "alice" }],
      });
      expectError(res, 400, /input\[0\]\.speaker/);
    });

    it("is 400 for a turn voice the model does not have, naming the turn", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "bob",
        input: [{ text: "Hi.", voice: "alloy" }],
      });
      expectError(res, 400, /input\[0\]\.voice/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 when a turn has no voice and there is no top-level voice", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        input: [{ text: "Hi.", voice: "alice" }, { text: "Who am I?" }],
      });
      expectError(res, 400, /input\[1\]\.voice/);
    });

    it("needs no top-level voice when every turn has one", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        input: [
          { text: "Hi.", voice: "alice" },
          { text: "Hello.", voice: "bob" },
        ],
      });
      expectAudio(res);
      expect(h.fakes.acme.requests.map((r) => r.body.voice)).to.deep.equal(["alice", "bob"]);
    });

    it("is 400 for an empty top-level voice, even when every turn has one (spec: at least 1 character)", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "",
        input: [
          { text: "Hi.", voice: "alice" },
          { text: "Hello.", voice: "bob" },
        ],
      });
      expectError(res, 400, /^voice must be at least 1 character/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 for a top-level voice the model does not have, even when every turn has one", async () => {
      const res = await h.speak({
        model: MODELS.dialogue,
        voice: "nobody",
        input: [{ text: "Hi.", voice: "alice" }],
      });
      expectError(res, 400, /^voice "nobody" is not a voice of model/);
    });
  });

  describe("voice", () => {
    it("is 400 when missing", async () => {
      const res = await h.speak({ model: MODELS.basic, input: "Hello." });
      expectError(res, 400, /voice/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 when empty", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "", input: "Hello." });
      expectError(res, 400, /voice/);
    });

    it("is 400 when not a string", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: 7, input: "Hello." });
      expectError(res, 400, /voice/);
    });

    it("is 400 when the model does not have it, naming voice and model", async () => {
      const res = await h.speak({ model: MODELS.basic, voice: "alice", input: "Hello." });
      expectError(res, 400, /voice "alice".*acme\/tts-basic/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("accepts the engine's own voice ids and OpenAI's names on the embedded engine", async () => {
      for (const voice of ["en-us", "de", "nova"]) {
        const res = await h.speak({ model: MODELS.espeak, voice, input: "Guten Tag." });
        expectAudio(res);
      }
      const res = await h.speak({ model: MODELS.espeak, voice: "no-such-voice", input: "Hi." });
      expectError(res, 400, /voice/);
    });
  });
});
