import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { DIALOGUE_VOICES, MODELS } from "../kit/speech-catalog.js";
import { expectAudio, useSpeechSystem } from "../kit/speech-system.js";

describe("speech: GET /models?output_modalities=speech", () => {
  const h = useSpeechSystem();
  // biome-ignore lint/suspicious/noExplicitAny: model JSON
  const byId = (list: any[]) => new Map(list.map((m) => [m.id, m]));

  it("lists every catalog model with its supported voices", async () => {
    const res = await h.api.get("/api/v1/models?output_modalities=speech");
    expect(res.status).to.equal(200);
    const models = byId(res.body.data);
    expect([...models.keys()].sort()).to.deep.equal(Object.values(MODELS).sort());
    for (const m of models.values()) {
      expect(m.supported_voices, m.id).to.be.an("array").that.is.not.empty;
      for (const v of m.supported_voices) expect(v).to.be.a("string").that.is.not.empty;
      expect(m.architecture.output_modalities).to.deep.equal(["speech"]);
    }
    expect(models.get(MODELS.dialogue).supported_voices).to.deep.equal(DIALOGUE_VOICES);
    expect(models.get(MODELS.espeak).supported_voices).to.include.members(["alloy", "en-us", "de"]);
  });

  it("shows what each endpoint can do, as the routing uses it", async () => {
    const res = await h.api.get("/api/v1/models?output_modalities=speech");
    const models = byId(res.body.data);
    expect(models.get(MODELS.cloneOne).endpoints[0].capabilities).to.include({
      voice_cloning: true,
      max_references: 1,
    });
    expect(models.get(MODELS.fixedSpeed).endpoints[0].capabilities.speed).to.equal(false);
    expect(models.get(MODELS.leaky).endpoints[0].data_policy).to.include({
      zero_data_retention: false,
      trains_on_data: true,
    });
    expect(
      models.get(MODELS.failoverDead).endpoints.map((e: { provider: string }) => e.provider),
    ).to.deep.equal(["dead", "backup"]);
    // Never the provider's address or key variable.
    expect(JSON.stringify(res.body)).not.to.match(/127\.0\.0\.1|API_KEY/);
  });

  it("lists voices that the speech endpoint accepts", async () => {
    const res = await h.api.get("/api/v1/models?output_modalities=speech");
    const dialogue = byId(res.body.data).get(MODELS.dialogue);
    for (const voice of dialogue.supported_voices) {
      expectAudio(await h.speak({ model: MODELS.dialogue, voice, input: "Listed." }));
    }
  });

  it("lists no speech models for another modality, and all of them by default", async () => {
    const text = await h.api.get("/api/v1/models?output_modalities=text");
    expect(text.status).to.equal(200);
    expect(text.body.data).to.deep.equal([]);
    const plain = await h.api.get("/api/v1/models");
    expect(plain.body.data).to.have.length(Object.values(MODELS).length);
  });

  it("is 400 for an unknown query parameter", async () => {
    expectError(await h.api.get("/api/v1/models?output_modality=speech"), 400, /output_modality/);
  });
});
