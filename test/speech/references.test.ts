import { expect } from "chai";
import { SPEECH_LIMITS } from "../../domain/limits.js";
import { PNG_DATA_URL, wavDataUrl } from "../kit/audio.js";
import { expectError } from "../kit/expect.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, PCM_TYPE, useSpeechSystem } from "../kit/speech-system.js";

const NO_CAPABLE_ENDPOINT = /^No endpoints available matching the request's requirements$/;

const clip = (seconds = 0.2) => ({
  type: "input_audio",
  input_audio: { data: wavDataUrl(seconds) },
});
const transcript = (text: string) => ({ type: "text", text });
const image = (url = PNG_DATA_URL) => ({ type: "image_url", image_url: { url } });

describe("speech: input_references", () => {
  const h = useSpeechSystem();
  const speak = (model: string, input_references: unknown) =>
    h.speak({ model, voice: "alloy", input: "Say this in my voice.", input_references });

  describe(`size: OpenRouter's ${SPEECH_LIMITS.maxReferenceBytes / 1024 / 1024} MiB decoded`, () => {
    /** A data URL of exactly `bytes` decoded bytes, a multiple of 3 (zeros: "AAAA" is 3 of them). */
    const sized = (bytes: number) => ({
      type: "input_audio",
      input_audio: {
        data: `data:audio/wav;base64,${"A".repeat((bytes / 3) * 4)}`,
      },
    });

    it("accepts references of 15 MiB decoded and passes them on", async function () {
      this.timeout(60_000);
      const res = await speak(MODELS.cloneOne, [sized(SPEECH_LIMITS.maxReferenceBytes)]);
      expectAudio(res, PCM_TYPE);
      const sent = h.fakes.acme.requests[0]?.body.input_references[0].input_audio.data;
      expect(sent.length).to.equal("data:audio/wav;base64,".length + (15 * 1024 * 1024 * 4) / 3);
    });

    it("is 413 beyond it, naming input_references and the limit", async function () {
      this.timeout(60_000);
      const res = await speak(MODELS.cloneOne, [sized(SPEECH_LIMITS.maxReferenceBytes + 3)]);
      expectError(
        res,
        413,
        /input_references decode to 15728643 bytes, at most 15728640 \(15 MiB\)/,
      );
      expect(h.fakes.acme.requests).to.be.empty;
    });
  });

  describe("audio mode", () => {
    for (const n of [1, 2, 3]) {
      it(`accepts ${n} clip(s) and passes them to the provider in order`, async () => {
        const refs = Array.from({ length: n }, (_, i) => clip(0.1 + i * 0.05));
        const res = await speak(MODELS.cloneThree, refs);
        expectAudio(res, PCM_TYPE);
        expect(h.fakes.acme.requests).to.have.length(1);
        expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal(refs);
      });
    }

    it("is 400 for 4 clips", async () => {
      const res = await speak(MODELS.cloneThree, [clip(), clip(), clip(), clip()]);
      expectError(res, 400, /at most 3/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("accepts a single clip's transcript before it", async () => {
      const refs = [transcript("Hello, this is me."), clip()];
      const res = await speak(MODELS.cloneOne, refs);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal(refs);
    });

    it("accepts a single clip's transcript after it", async () => {
      const refs = [clip(), transcript("Hello, this is me.")];
      const res = await speak(MODELS.cloneOne, refs);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal(refs);
    });

    it("accepts several clips when each transcript directly follows its clip", async () => {
      const refs = [clip(), transcript("First."), clip(), clip(), transcript("Third.")];
      const res = await speak(MODELS.cloneThree, refs);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal(refs);
    });

    for (const [what, refs, index] of [
      ["before the first of several clips", [transcript("A."), clip(), clip()], 0],
      ["after another transcript", [clip(), clip(), transcript("B."), transcript("C.")], 3],
      [
        "after a transcript, between clips",
        [clip(), transcript("A."), transcript("B."), clip()],
        2,
      ],
    ] as const) {
      it(`is 400 with several clips and a transcript ${what}, naming it`, async () => {
        const res = await speak(MODELS.cloneThree, refs);
        expectError(res, 400, new RegExp(`input_references\\[${index}\\]`));
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("is 400 for more transcripts than clips", async () => {
      const res = await speak(MODELS.cloneOne, [transcript("A."), clip(), transcript("B.")]);
      expectError(res, 400, /transcript/);
    });

    it("is 400 for a transcript without any clip", async () => {
      const res = await speak(MODELS.cloneOne, [transcript("A.")]);
      expectError(res, 400, /input_references/);
    });

    for (const [what, data] of [
      ["is not a data URL", "https://example.com/me.wav"],
      ["is not audio", `data:text/plain;base64,${Buffer.from("hello").toString("base64")}`],
      ["is an image", PNG_DATA_URL],
      ["does not decode", "data:audio/wav;base64,@@not*base64@@"],
      ["has broken base64", "data:audio/wav;base64,QUJDR"],
      ["is empty", "data:audio/wav;base64,"],
    ] as const) {
      it(`is 400 for a clip whose data ${what}, naming input_references[i].input_audio.data`, async () => {
        const res = await speak(MODELS.cloneThree, [
          clip(),
          transcript("Fine."),
          { type: "input_audio", input_audio: { data } },
        ]);
        expectError(res, 400, /input_references\[2\]\.input_audio\.data/);
        expect(h.fakes.acme.requests).to.be.empty;
      });
    }

    it("is 400 for a part of unknown type, and for unknown fields in a part", async () => {
      let res = await speak(MODELS.cloneOne, [{ type: "video_url", video_url: {} }]);
      expectError(res, 400, /input_references\[0\]\.type/);
      res = await speak(MODELS.cloneOne, [
        { type: "input_audio", input_audio: { data: wavDataUrl(), loudness: 3 } },
      ]);
      expectError(res, 400, /input_references\[0\]\.input_audio\.loudness/);
      res = await speak(MODELS.cloneOne, ["data:audio/wav;base64,AAAA"]);
      expectError(res, 400, /input_references\[0\]/);
    });

    it("routes audio references only to models that clone voices: 404 otherwise", async () => {
      const res = await speak(MODELS.basic, [clip()]);
      expectError(res, 404, NO_CAPABLE_ENDPOINT);
      expect(h.fakes.acme.requests).to.be.empty;
      const engine = await speak(MODELS.espeak, [clip()]);
      expectError(engine, 404, NO_CAPABLE_ENDPOINT);
    });

    it("routes several clips only to models that take that many: 404 on max_references 1", async () => {
      const refs = [clip(), clip()];
      const one = await speak(MODELS.cloneOne, refs);
      expectError(one, 404, NO_CAPABLE_ENDPOINT);
      expect(h.fakes.acme.requests).to.be.empty;
      const three = await speak(MODELS.cloneThree, refs);
      expectAudio(three);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal(refs);
    });
  });

  describe("image mode", () => {
    it("accepts exactly one image_url and passes it on", async () => {
      const res = await speak(MODELS.image, [image()]);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal([image()]);
    });

    it("accepts an https image URL", async () => {
      const url = "https://example.com/portrait.png";
      const res = await speak(MODELS.image, [image(url)]);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body.input_references).to.deep.equal([image(url)]);
    });

    it("is 400 for two images", async () => {
      const res = await speak(MODELS.image, [image(), image()]);
      expectError(res, 400, /exactly one image_url/);
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 for an image with a transcript", async () => {
      const res = await speak(MODELS.image, [image(), transcript("A face.")]);
      expectError(res, 400, /exactly one image_url/);
    });

    it("is 400 for mixing audio and image", async () => {
      for (const refs of [
        [clip(), image()],
        [image(), clip()],
      ]) {
        const res = await speak(MODELS.image, refs);
        expectError(res, 400, /mix/);
      }
      expect(h.fakes.acme.requests).to.be.empty;
    });

    it("is 400 for an image URL that is neither a data URL nor https", async () => {
      const res = await speak(MODELS.image, [image("http://example.com/a.png")]);
      expectError(res, 400, /input_references\[0\]\.image_url\.url/);
    });

    it("routes an image only to models that take one: 404 otherwise", async () => {
      const res = await speak(MODELS.cloneThree, [image()]);
      expectError(res, 404, NO_CAPABLE_ENDPOINT);
      expect(h.fakes.acme.requests).to.be.empty;
    });
  });

  describe("an empty array", () => {
    it("is no reference: any model accepts it and the provider gets no references", async () => {
      const res = await speak(MODELS.basic, []);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body).not.to.have.property("input_references");
      const engine = await speak(MODELS.espeak, []);
      expectAudio(engine, PCM_TYPE);
    });

    it("is the same as null", async () => {
      const res = await speak(MODELS.basic, null);
      expectAudio(res);
      expect(h.fakes.acme.requests[0]?.body).not.to.have.property("input_references");
    });
  });
});
