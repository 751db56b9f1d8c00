import { expect } from "chai";
import { readAll, refused, useContractSystem, valid } from "../kit/contract-clients.js";
import { MODELS } from "../kit/speech-catalog.js";

const TEXT = "Contract speech.";

describe("contract: @openrouter/sdk tts, generations", () => {
  const h = useContractSystem();

  for (const responseFormat of ["pcm", "mp3"] as const) {
    it(`tts.createSpeech() streams ${responseFormat}`, async () => {
      const stream = await valid(
        h.user.tts.createSpeech({
          speechRequest: { model: MODELS.basic, voice: "alloy", input: TEXT, responseFormat },
        }),
      );
      const bytes = await readAll(stream);
      expect(bytes.byteLength).to.be.above(0);
      if (responseFormat === "pcm") expect(bytes.byteLength % 2).to.equal(0);
      expect(h.speech.fakes.acme.requests[0]?.body.response_format).to.equal(responseFormat);
    });
  }

  it("tts.createSpeech() with the embedded engine and the SDK's own fields", async () => {
    const stream = await valid(
      h.user.tts.createSpeech({
        speechRequest: {
          model: MODELS.espeak,
          voice: "en-us",
          input: TEXT,
          speed: 1.5,
          sessionId: "contract-session",
          user: "contract-user",
        },
      }),
    );
    expect((await readAll(stream)).byteLength).to.be.above(0);
  });

  it("tts.createSpeech() errors are the SDK's error types (voice: at least 1 character)", async () => {
    await refused(
      h.user.tts.createSpeech({ speechRequest: { model: MODELS.basic, voice: "", input: TEXT } }),
      400,
      /voice/,
    );
    await refused(
      h.user.tts.createSpeech({
        speechRequest: { model: "acme/none", voice: "alloy", input: TEXT },
      }),
      404,
    );
    await refused(
      h.admin.tts.createSpeech({
        speechRequest: { model: MODELS.basic, voice: "alloy", input: TEXT },
      }),
      403,
    );
  });

  it("generations.getGeneration() parses the record of a speech request", async () => {
    const res = await h.speech.speak({
      model: MODELS.basic,
      voice: "alloy",
      input: TEXT,
      session_id: "gen-session",
    });
    expect(res.status).to.equal(200);
    const id = res.headers.get("x-generation-id") ?? "";
    await h.speech.waitForGeneration(id, (g) => g.status === "completed");
    const record = await valid(h.user.generations.getGeneration({ id }));
    expect(record.data).to.include({
      id,
      model: MODELS.basic,
      providerName: "acme",
      apiType: "tts",
      isByok: false,
      sessionId: "gen-session",
      dataRegion: "global",
    });
    expect(record.data.totalCost).to.equal((TEXT.length * 20) / 1_000_000);
    await refused(h.user.generations.getGeneration({ id: "gen-none" }), 404);
  });
});
