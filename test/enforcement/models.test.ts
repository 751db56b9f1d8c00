import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

const TEXT = "Model check.";

describe("enforcement: allowed and ignored models", () => {
  const w = useWorld();

  it("a model outside allowed_models is 403 naming the rule and the guardrail", async () => {
    const { key } = await w.gw.governedKey({ name: "Only fast", allowed_models: [MODELS.fast] });
    const res = await w.gw.speak(key, { model: MODELS.openai, input: TEXT });
    expectError(res, 403, /openai\/tts-dual.*"Only fast".*allowed_models/);
    expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), "fast");
  });

  it("the guardrail may name the alias and the request the canonical id, and the other way", async () => {
    const byAlias = await w.gw.governedKey({ allowed_models: [MODELS.openaiAlias] });
    expectAudio(await w.gw.speak(byAlias.key, { model: MODELS.openai, input: TEXT }));
    expectAudio(await w.gw.speak(byAlias.key, { model: MODELS.openaiAlias, input: TEXT }));
    const byId = await w.gw.governedKey({ allowed_models: [MODELS.openai] });
    expectAudio(await w.gw.speak(byId.key, { model: MODELS.openaiAlias, input: TEXT }));
    const espeak = await w.gw.governedKey({ allowed_models: ["espeak-ng"] });
    expectAudio(await w.gw.speak(espeak.key, { model: MODELS.espeak, input: TEXT }), "railgate");
  });

  it("two guardrails allowing the same model by different slugs still allow it", async () => {
    const { ws, key } = await w.gw.governedKey({
      allowed_models: [MODELS.openaiAlias, MODELS.fast],
    });
    await w.gw.setDefault(ws, { allowed_models: [MODELS.openai] });
    expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }));
    const explained = await w.gw.explain(key, `?model=${MODELS.openai}`);
    expect(explained.models[0]).to.deep.include({ allowed: true, reason: null });
    expect(explained.effective_policy.allowed_models).to.deep.equal([MODELS.openai]);
    // The intersection leaves only the model both allow.
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /allowed_models/);
  });

  it("allowed_models of key and workspace default intersect", async () => {
    const { ws, key } = await w.gw.governedKey({ allowed_models: [MODELS.fast, MODELS.openai] });
    await w.gw.setDefault(ws, { allowed_models: [MODELS.fast, MODELS.google] });
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectError(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), 403);
    expectError(await w.gw.speak(key, { model: MODELS.google, input: TEXT }), 403);
  });

  it("ignored_models is 403, by id or alias, and unions across guardrails", async () => {
    const { ws, key } = await w.gw.governedKey({
      name: "No dual",
      ignored_models: [MODELS.openaiAlias],
    });
    await w.gw.setDefault(ws, { ignored_models: [MODELS.fast] });
    expectError(
      await w.gw.speak(key, { model: MODELS.openai, input: TEXT }),
      403,
      /openai\/tts-dual.*"No dual".*ignored_models/,
    );
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /ignored_models/);
    expectAudio(await w.gw.speak(key, { model: MODELS.google, input: TEXT }));
    expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    expect(w.fakes.fast.requests).to.have.length(0);
  });

  it("an unknown model is 404, not a guardrail refusal", async () => {
    const { key } = await w.gw.governedKey({ allowed_models: [MODELS.fast] });
    expectError(await w.gw.speak(key, { model: "acme/nope", input: TEXT }), 404, /not found/);
  });
});
