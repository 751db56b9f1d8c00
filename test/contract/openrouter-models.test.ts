import { expect } from "chai";
import { refused, useContractSystem, valid } from "../kit/contract-clients.js";
import { CREATED, MODELS } from "../kit/speech-catalog.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const CATALOG = Object.values(MODELS);

describe("contract: @openrouter/sdk models, endpoints", () => {
  const h = useContractSystem();

  it("models.list() with the SDK's defaults (limit 500, offset 0) parses every model", async () => {
    const page = await valid(h.user.models.list());
    expect(page.result.totalCount).to.equal(CATALOG.length);
    expect(page.result.data.map((m) => m.id)).to.deep.equal(CATALOG);
    const basic = page.result.data.find((m) => m.id === MODELS.basic);
    expect(basic?.canonicalSlug).to.equal(MODELS.basic);
    expect(basic?.created).to.equal(Date.parse(CREATED.basic) / 1000);
    expect(basic?.pricing).to.include({ prompt: "0.00002", completion: "0" });
    expect(basic?.architecture.outputModalities).to.deep.equal(["speech"]);
    expect(basic?.topProvider.isModerated).to.equal(false);
    expect(basic?.supportedVoices).to.include("alloy");
    expect(page.result.links.next).to.equal(null);
  });

  it("models.list() pages through the catalog with the SDK's iterator", async () => {
    const seen: string[] = [];
    let pages = 0;
    for await (const page of await valid(h.user.models.list({ limit: 4 }))) {
      pages++;
      seen.push(...page.result.data.map((m) => m.id));
    }
    expect(seen).to.deep.equal(CATALOG);
    expect(pages).to.equal(Math.ceil(CATALOG.length / 4) + (CATALOG.length % 4 === 0 ? 1 : 0));
  });

  it("models.list() filters with the SDK's parameters and ignores the LLM-only ones", async () => {
    const page = await valid(
      h.user.models.list({
        q: "clone",
        outputModalities: "speech",
        inputModalities: "audio",
        sort: "pricing-low-to-high",
        context: 1000,
        category: "programming",
        minIntelligenceIndex: 1,
      }),
    );
    expect(page.result.data.map((m) => m.id)).to.have.members([MODELS.cloneOne, MODELS.cloneThree]);
  });

  it("models.list() with a bad value is a 400 the SDK parses, naming the parameter", async () => {
    await refused(h.user.models.list({ limit: 5000 }), 400, /limit/);
    await refused(h.user.models.list({ outputModalities: "smell" }), 400, /output_modalities/);
  });

  it("models.listForUser(): the models the key's guardrails leave it", async () => {
    const all = await valid(h.user.models.listForUser({ bearer: h.speech.key.secret }));
    expect(all.result.data.map((m) => m.id)).to.deep.equal(CATALOG);
    const key = await h.speech.createKey();
    const g = await h.speech.admin.post("/api/v1/guardrails", {
      name: "only basic",
      allowed_models: [MODELS.basic],
    });
    expect(g.status).to.equal(201);
    const assigned = await h.speech.admin.post(
      `/api/v1/guardrails/${g.body.data.id}/assignments/keys`,
      {
        key_hashes: [key.hash],
      },
    );
    expect(assigned.status).to.equal(200);
    const mine = await valid(h.sdk(key.secret).models.listForUser({ bearer: key.secret }));
    expect(mine.result.data.map((m) => m.id)).to.deep.equal([MODELS.basic]);
    expect(mine.result.totalCount).to.equal(1);
    await refused(h.admin.models.listForUser({ bearer: MANAGEMENT_KEY }), 403);
  });

  it("endpoints.listZdrEndpoints(): every zero-data-retention endpoint, as PublicEndpoint", async () => {
    const res = await valid(h.user.endpoints.listZdrEndpoints());
    expect(res.data).to.not.be.empty;
    const leaky = res.data.filter((e) => e.modelId === MODELS.leaky);
    expect(leaky).to.deep.equal([]);
    const basic = res.data.find((e) => e.modelId === MODELS.basic);
    expect(basic?.pricing.prompt).to.equal("0.00002");
    expect(basic?.supportsVoiceCloning).to.equal(false);
  });

  it("models.count()", async () => {
    const all = await valid(h.user.models.count());
    expect(all.data.count).to.equal(CATALOG.length);
    const text = await valid(h.user.models.count({ outputModalities: "text" }));
    expect(text.data.count).to.equal(0);
  });

  it("models.get() by id and by an alias", async () => {
    const one = await valid(h.user.models.get({ author: "acme", slug: "tts-basic" }));
    expect(one.data.id).to.equal(MODELS.basic);
    const alias = await valid(h.user.models.get({ author: "acme", slug: "basic-v1" }));
    expect(alias.data.id).to.equal(MODELS.basic);
    await refused(h.user.models.get({ author: "acme", slug: "nope" }), 404, /not found/);
  });

  it("endpoints.list() parses each endpoint", async () => {
    const res = await valid(h.user.endpoints.list({ author: "multi", slug: "shared" }));
    expect(res.data.id).to.equal(MODELS.shared);
    expect(res.data.endpoints.map((e) => e.providerName)).to.deep.equal(["acme", "backup"]);
    const clone = await valid(h.user.endpoints.list({ author: "acme", slug: "clone-one" }));
    expect(clone.data.endpoints[0]?.supportsVoiceCloning).to.equal(true);
  });
});
