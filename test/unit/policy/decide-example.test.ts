import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { ModelCatalog } from "../../../domain/catalog/model-catalog.js";
import {
  FilterAction,
  GuardrailSchema,
  Region,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { decideExample } from "../../../governance/decide-example.js";
import { loadCatalog } from "../../../services/speech/catalog/load-catalog.js";

/** The built-in catalog with its OpenAI models, as the guardrail service loads it. */
const catalog = new ModelCatalog(loadCatalog({ openAi: {} }), []);
const account = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };

describe("deciding an example request under one guardrail", () => {
  it("allows what nothing restricts, and refuses an unknown model or region left out", async () => {
    const g = create(GuardrailSchema, { allowedDataRegions: { values: [Region.EUROPE] } });
    const engine = { model: "railgate/espeak-ng" };
    expect(await decideExample(g, engine, catalog, account)).to.deep.equal({
      outcome: "allowed",
      reason: "",
    });
    expect(await decideExample(g, { ...engine, region: "europe" }, catalog, account)).to.include({
      outcome: "allowed",
    });
    expect((await decideExample(g, { ...engine, region: "us" }, catalog, account)).reason).to.equal(
      "region us is not in allowed_data_regions",
    );
    expect(await decideExample(g, { model: "nobody/nothing" }, catalog, account)).to.deep.equal({
      outcome: "refused",
      reason: "model nobody/nothing is not in the catalog",
    });
  });

  it("refuses by the model lists and by the endpoints' data policy (ZDR), naming the rule", async () => {
    const models = create(GuardrailSchema, { allowedModels: { values: ["railgate/espeak-ng"] } });
    const refused = await decideExample(models, { model: "openai/tts-1" }, catalog, account);
    expect(refused.outcome).to.equal("refused");
    expect(refused.reason).to.match(/allowed_models/);
    // OpenAI's endpoints keep data: a guardrail that enforces ZDR for OpenAI leaves none.
    const zdr = create(GuardrailSchema, { enforceZdrOpenai: true });
    const noEndpoint = await decideExample(zdr, { model: "openai/tts-1" }, catalog, account);
    expect(noEndpoint.outcome).to.equal("refused");
    expect(noEndpoint.reason).to.match(/not zero-data-retention \(enforce_zdr_openai\)/);
    expect(
      (
        await decideExample(
          zdr,
          { model: "railgate/espeak-ng", provider: "openai" },
          catalog,
          account,
        )
      ).reason,
    ).to.match(/no endpoint of model railgate\/espeak-ng from provider openai/);
  });

  it("applies the content filters to the input: block refuses, else redact, else flag", async () => {
    const g = (action: FilterAction) =>
      create(GuardrailSchema, {
        contentFilterBuiltins: { values: [{ slug: "email", action }] },
        contentFilters: { values: [{ pattern: "launch code", action: FilterAction.FLAG }] },
      });
    const input = "mail me at someone@example.com";
    const request = { model: "railgate/espeak-ng", input };
    expect(await decideExample(g(FilterAction.BLOCK), request, catalog, account)).to.deep.equal({
      outcome: "refused",
      reason: "Request blocked by content filter: Email address",
    });
    expect(await decideExample(g(FilterAction.REDACT), request, catalog, account)).to.include({
      outcome: "redacted",
    });
    const flagged = await decideExample(
      g(FilterAction.REDACT),
      { ...request, input: "the launch code" },
      catalog,
      account,
    );
    expect(flagged.outcome).to.equal("flagged");
    expect(
      await decideExample(g(FilterAction.BLOCK), { ...request, input: "hello" }, catalog, account),
    ).to.include({ outcome: "allowed" });
  });
});
