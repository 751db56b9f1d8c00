import { fileURLToPath } from "node:url";
import { expect } from "chai";
import {
  defaultCatalog,
  loadCatalog,
  parseCatalog,
} from "../../../services/speech/catalog/load-catalog.js";
import { withoutEmbeddedEngine } from "../../../services/speech/catalog/without-embedded-engine.js";
import { embeddedEngineUnavailable } from "../../../services/speech/engines/espeak/availability.js";

const EXAMPLE_CATALOG = fileURLToPath(
  new URL("../../../../deploy/catalog.example.json", import.meta.url),
);

const endpoint = (provider: string, adapter: string) => ({
  provider,
  adapter,
  price_per_million_chars: 1,
});

describe("speech catalog without the embedded engine", () => {
  it("the docker-compose example catalog passes the catalog loader", () => {
    const catalog = loadCatalog({ file: EXAMPLE_CATALOG });
    expect(catalog.models.map((m) => m.id)).to.deep.equal(["railgate/espeak-ng", "openai/tts-1"]);
    expect(catalog.providers.openai?.api_key_env).to.equal("OPENAI_API_KEY");
  });

  it("skips models only the engine serves and keeps the other endpoints of the rest", () => {
    const catalog = parseCatalog({
      providers: { up: { base_url: "http://up.invalid/v1" } },
      models: [
        {
          id: "railgate/only-engine",
          voices: "engine",
          endpoints: [endpoint("railgate", "espeak")],
        },
        {
          id: "acme/both",
          voices: ["a"],
          endpoints: [endpoint("railgate", "espeak"), endpoint("up", "openai-compatible")],
        },
        { id: "acme/upstream", voices: ["a"], endpoints: [endpoint("up", "openai-compatible")] },
      ],
    });
    const trimmed = withoutEmbeddedEngine(catalog);
    expect(trimmed.skippedModels).to.deep.equal(["railgate/only-engine"]);
    expect(trimmed.trimmedModels).to.deep.equal(["acme/both"]);
    expect(trimmed.catalog.models.map((m) => m.id)).to.deep.equal(["acme/both", "acme/upstream"]);
    expect(trimmed.catalog.models[0]?.endpoints.map((e) => e.adapter)).to.deep.equal([
      "openai-compatible",
    ]);
    // The input is not changed: the guardrail service reads the same catalog's aliases.
    expect(catalog.models).to.have.length(3);
    expect(catalog.models[1]?.endpoints).to.have.length(2);
  });

  it("leaves the built-in catalog without models when the engine is its only one", () => {
    const trimmed = withoutEmbeddedEngine(defaultCatalog());
    expect(trimmed.catalog.models).to.deep.equal([]);
    expect(trimmed.skippedModels).to.deep.equal(["railgate/espeak-ng"]);
  });

  it("reports the engine unavailable when switched off, available when installed", () => {
    expect(embeddedEngineUnavailable("off")).to.equal("RAILGATE_EMBEDDED_ENGINE=off");
    expect(embeddedEngineUnavailable("auto")).to.equal(undefined);
  });
});
