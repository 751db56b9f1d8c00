import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, NO_ENDPOINTS } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

const TEXT = "Routing check.";

describe("enforcement: endpoint routing under the policy", () => {
  const w = useWorld();

  describe("providers", () => {
    it("without a guardrail the first endpoint in catalog order serves", async () => {
      const ws = await w.gw.workspace();
      const key = await w.gw.key(ws);
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-retaining");
      expect(w.fakes["oai-retaining"].requests[0]?.body.input).to.equal(TEXT);
      expect(w.fakes["oai-zdr"].requests).to.have.length(0);
    });

    it("allowed_providers picks the endpoint", async () => {
      const { key } = await w.gw.governedKey({ allowed_providers: ["oai-zdr"] });
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-zdr");
      expect(w.fakes["oai-zdr"].requests).to.have.length(1);
      expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    });

    it("ignored_providers excludes the endpoint", async () => {
      const { key } = await w.gw.governedKey({ ignored_providers: ["oai-retaining"] });
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-zdr");
      expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    });

    it("allowed_providers of two guardrails intersect; ignored ones union", async () => {
      const { ws, key } = await w.gw.governedKey({
        allowed_providers: ["oai-retaining", "oai-zdr", "fast"],
      });
      await w.gw.setDefault(ws, { ignored_providers: ["oai-retaining"] });
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-zdr");
      // The google provider is outside the key's allow-list.
      expectError(await w.gw.speak(key, { model: MODELS.google, input: TEXT }), 404, NO_ENDPOINTS);
    });

    it("nothing left: 404 with exactly the spec's message, and no upstream is called", async () => {
      const { key } = await w.gw.governedKey({
        allowed_providers: ["oai-retaining"],
        ignored_providers: ["oai-retaining"],
      });
      expectError(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), 404, NO_ENDPOINTS);
      expect(w.fakes["oai-retaining"].requests).to.have.length(0);
      expect(w.fakes["oai-zdr"].requests).to.have.length(0);
    });
  });

  describe("zero data retention", () => {
    it("enforce_zdr_openai routes the openai model to its ZDR endpoint only", async () => {
      const { key } = await w.gw.governedKey({ enforce_zdr_openai: true });
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-zdr");
      expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    });

    it("enforce_zdr_openai leaves other vendors' models alone", async () => {
      const { key } = await w.gw.governedKey({
        enforce_zdr_openai: true,
        enable_paid_model_training: true,
      });
      // acme/paid-trainer is not ZDR, and "other": unaffected by the openai flag.
      expectAudio(
        await w.gw.speak(key, { model: MODELS.paidTrainer, input: TEXT }),
        "paid-trainer",
      );
      expectAudio(await w.gw.speak(key, { model: MODELS.steerable, input: TEXT }), "steer");
    });

    it("enforce_zdr_other does apply to them", async () => {
      const { key } = await w.gw.governedKey({ enforce_zdr_other: true });
      expectError(
        await w.gw.speak(key, { model: MODELS.steerable, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-retaining");
    });

    it("the deprecated enforce_zdr sets every vendor", async () => {
      const { key } = await w.gw.governedKey({ enforce_zdr: true });
      expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-zdr");
      expectError(
        await w.gw.speak(key, { model: MODELS.steerable, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
    });

    it("a request's provider.zdr: true adds ZDR", async () => {
      const ws = await w.gw.workspace();
      const key = await w.gw.key(ws);
      const res = await w.gw.speak(key, {
        model: MODELS.openai,
        input: TEXT,
        provider: { zdr: true },
      });
      expectAudio(res, "oai-zdr");
      expectError(
        await w.gw.speak(key, { model: MODELS.steerable, input: TEXT, provider: { zdr: true } }),
        404,
        NO_ENDPOINTS,
      );
    });

    it("a request's provider.zdr: false never removes a guardrail's ZDR", async () => {
      const { key } = await w.gw.governedKey({ enforce_zdr_openai: true });
      const res = await w.gw.speak(key, {
        model: MODELS.openai,
        input: TEXT,
        provider: { zdr: false },
      });
      expectAudio(res, "oai-zdr");
      expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    });

    it("enforce_zdr_google with allow_safety_retention_google false: 404; null or true: 200", async () => {
      const no = await w.gw.governedKey({
        enforce_zdr_google: true,
        allow_safety_retention_google: false,
      });
      expectError(
        await w.gw.speak(no.key, { model: MODELS.google, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
      expect(w.fakes["google-safety"].requests).to.have.length(0);
      const inherit = await w.gw.governedKey({ enforce_zdr_google: true });
      expectAudio(
        await w.gw.speak(inherit.key, { model: MODELS.google, input: TEXT }),
        "google-safety",
      );
      const yes = await w.gw.governedKey({
        enforce_zdr_google: true,
        allow_safety_retention_google: true,
      });
      expectAudio(
        await w.gw.speak(yes.key, { model: MODELS.google, input: TEXT }),
        "google-safety",
      );
    });

    it("safety retention only matters to ZDR-only requests", async () => {
      const { key } = await w.gw.governedKey({ allow_safety_retention_google: false });
      expectAudio(await w.gw.speak(key, { model: MODELS.google, input: TEXT }), "google-safety");
    });

    it("a request made ZDR-only by provider.zdr also may not use safety-retaining endpoints the policy refuses", async () => {
      const { key } = await w.gw.governedKey({ allow_safety_retention_google: false });
      expectError(
        await w.gw.speak(key, { model: MODELS.google, input: TEXT, provider: { zdr: true } }),
        404,
        NO_ENDPOINTS,
      );
      expect(w.fakes["google-safety"].requests).to.have.length(0);
    });

    it("allow_safety_retention_google false on the workspace default overrides a key's true", async () => {
      const { ws, key } = await w.gw.governedKey({
        enforce_zdr_google: true,
        allow_safety_retention_google: true,
      });
      await w.gw.setDefault(ws, { allow_safety_retention_google: false });
      expectError(await w.gw.speak(key, { model: MODELS.google, input: TEXT }), 404, NO_ENDPOINTS);
    });
  });

  describe("training and publication", () => {
    it("without any guardrail every endpoint may serve", async () => {
      const ws = await w.gw.workspace();
      const key = await w.gw.key(ws);
      expectAudio(
        await w.gw.speak(key, { model: MODELS.freeTrainer, input: TEXT }),
        "free-trainer",
      );
      expectAudio(
        await w.gw.speak(key, { model: MODELS.paidTrainer, input: TEXT }),
        "paid-trainer",
      );
      expectAudio(
        await w.gw.speak(key, { model: MODELS.freePublisher, input: TEXT }),
        "free-publisher",
      );
    });

    it("a free trainer is refused unless enable_free_model_training", async () => {
      const off = await w.gw.governedKey({ enable_paid_model_training: true });
      expectError(
        await w.gw.speak(off.key, { model: MODELS.freeTrainer, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
      expect(w.fakes["free-trainer"].requests).to.have.length(0);
      const on = await w.gw.governedKey({ enable_free_model_training: true });
      expectAudio(
        await w.gw.speak(on.key, { model: MODELS.freeTrainer, input: TEXT }),
        "free-trainer",
      );
    });

    it("a paid trainer is refused unless enable_paid_model_training", async () => {
      const off = await w.gw.governedKey({ enable_free_model_training: true });
      expectError(
        await w.gw.speak(off.key, { model: MODELS.paidTrainer, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
      const on = await w.gw.governedKey({ enable_paid_model_training: true });
      expectAudio(
        await w.gw.speak(on.key, { model: MODELS.paidTrainer, input: TEXT }),
        "paid-trainer",
      );
    });

    it("a free publisher is refused unless enable_free_model_publication", async () => {
      const off = await w.gw.governedKey({ enable_free_model_training: true });
      expectError(
        await w.gw.speak(off.key, { model: MODELS.freePublisher, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
      const on = await w.gw.governedKey({ enable_free_model_publication: true });
      expectAudio(
        await w.gw.speak(on.key, { model: MODELS.freePublisher, input: TEXT }),
        "free-publisher",
      );
    });

    it("two guardrails AND their permissions: one false refuses", async () => {
      const { ws, key } = await w.gw.governedKey({
        enable_free_model_training: true,
        enable_paid_model_training: true,
        enable_free_model_publication: true,
      });
      await w.gw.setDefault(ws, {
        enable_free_model_training: true,
        enable_paid_model_training: false,
        enable_free_model_publication: true,
      });
      expectAudio(await w.gw.speak(key, { model: MODELS.freeTrainer, input: TEXT }));
      expectAudio(await w.gw.speak(key, { model: MODELS.freePublisher, input: TEXT }));
      expectError(
        await w.gw.speak(key, { model: MODELS.paidTrainer, input: TEXT }),
        404,
        NO_ENDPOINTS,
      );
    });

    it("the request's data_collection: deny refuses collecting endpoints even when allowed", async () => {
      const { key } = await w.gw.governedKey({ enable_free_model_training: true });
      expectError(
        await w.gw.speak(key, {
          model: MODELS.freeTrainer,
          input: TEXT,
          provider: { data_collection: "deny" },
        }),
        404,
        NO_ENDPOINTS,
      );
    });
  });
});
