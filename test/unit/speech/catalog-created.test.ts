import { timestampDate } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { ModelCatalog } from "../../../domain/catalog/model-catalog.js";
import { parseCatalog } from "../../../services/speech/catalog/load-catalog.js";

const ENDPOINT = {
  provider: "railgate",
  adapter: "espeak",
  price_per_million_chars: 1,
  capabilities: {},
  data_policy: {},
};

function catalogWith(extra: Record<string, unknown>) {
  return parseCatalog({
    models: [{ id: "acme/one", voices: ["a"], endpoints: [ENDPOINT], ...extra }],
  });
}

describe("speech catalog: a model's publication date (`created`)", () => {
  it("takes an ISO 8601 date or time and carries it to ListModels", () => {
    const catalog = new ModelCatalog(catalogWith({ created: "2025-03-20" }), []);
    const [model] = catalog.models();
    expect(model?.createdAt && timestampDate(model.createdAt).toISOString()).to.equal(
      "2025-03-20T00:00:00.000Z",
    );
    const [timed] = catalogWith({ created: "2025-03-20T10:00:00Z" }).models;
    expect(timed?.createdAt && timestampDate(timed.createdAt).toISOString()).to.equal(
      "2025-03-20T10:00:00.000Z",
    );
  });

  it("stands the catalog's load time in for a model without one", () => {
    const catalog = new ModelCatalog(catalogWith({}), []);
    const [model] = catalog.models();
    expect(model?.createdAt && timestampDate(model.createdAt).getTime()).to.equal(
      catalog.loadedAt.getTime(),
    );
  });

  for (const bad of ["March 1", "2025-13-45", "", 20250320]) {
    it(`refuses created ${JSON.stringify(bad)}, naming the path`, () => {
      expect(() => catalogWith({ created: bad })).to.throw(/models\[0\]\.created/);
    });
  }
});
