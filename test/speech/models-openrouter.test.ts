import { expect } from "chai";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { CREATED, MODELS } from "../kit/speech-catalog.js";
import { useSpeechSystem } from "../kit/speech-system.js";

// biome-ignore lint/suspicious/noExplicitAny: model JSON
type Json = any;
const ids = (list: Json[]) => list.map((m) => m.id);
const CATALOG_ORDER = Object.values(MODELS);

describe("speech: /models in OpenRouter's shapes (list, count, one model, its endpoints)", () => {
  const h = useSpeechSystem();
  const get = (path: string) => new Api(h.baseUrl).get(path);

  describe("GET /models", () => {
    it("carries every field OpenRouter's model has, prices as decimal strings per character", async () => {
      const res = await get("/api/v1/models");
      expect(res.status).to.equal(200);
      expect(res.body.total_count).to.equal(CATALOG_ORDER.length);
      expect(res.body.links).to.deep.equal({ next: null });
      const basic = res.body.data.find((m: Json) => m.id === MODELS.basic);
      expect(basic).to.deep.include({
        canonical_slug: MODELS.basic,
        created: Date.parse(CREATED.basic) / 1000,
        context_length: 10_000,
        per_request_limits: null,
        default_parameters: null,
        links: { details: `/api/v1/models/${MODELS.basic}/endpoints` },
      });
      expect(basic.aliases).to.deep.equal(["tts-basic", "acme/basic-v1"]);
      // 20 USD per million characters.
      expect(basic.pricing).to.include({ prompt: "0.00002", completion: "0" });
      expect(basic.architecture).to.deep.equal({
        input_modalities: ["text"],
        output_modalities: ["speech"],
        modality: "text->speech",
        instruct_type: null,
      });
      expect(basic.top_provider).to.deep.equal({
        context_length: 10_000,
        max_completion_tokens: null,
        is_moderated: false,
      });
      expect(basic.supported_parameters).to.deep.equal(["voice", "response_format", "speed"]);
      const espeak = res.body.data.find((m: Json) => m.id === MODELS.espeak);
      expect(espeak.pricing.prompt).to.equal("0.000001");
      expect(espeak.created).to.be.a("number").that.is.above(0);
      const clone = res.body.data.find((m: Json) => m.id === MODELS.cloneOne);
      expect(clone.architecture.input_modalities).to.deep.equal(["text", "audio"]);
      expect(clone.architecture.modality).to.equal("text+audio->speech");
      expect(clone.supported_parameters).to.include("input_references");
    });

    it("pages with limit and offset (the SDK's 500/0 included), pointing to the next page", async () => {
      const all = ids((await get("/api/v1/models")).body.data);
      expect(ids((await get("/api/v1/models?limit=500&offset=0")).body.data)).to.deep.equal(all);
      const page = await get("/api/v1/models?limit=2&offset=1");
      expect(ids(page.body.data)).to.deep.equal(all.slice(1, 3));
      expect(page.body.total_count).to.equal(all.length);
      expect(page.body.links.next).to.equal("/api/v1/models?limit=2&offset=3");
      const last = await get(`/api/v1/models?limit=2&offset=${all.length - 2}`);
      expect(ids(last.body.data)).to.deep.equal(all.slice(-2));
      expect(last.body.links.next).to.equal(null);
      const beyond = await get(`/api/v1/models?offset=${all.length}`);
      expect(beyond.body.data).to.deep.equal([]);
      expect(beyond.body.total_count).to.equal(all.length);
    });

    const filters: [string, string[]][] = [
      ["q=CLONE", [MODELS.cloneOne, MODELS.cloneThree]],
      [
        "model_authors=multi",
        [MODELS.shared, MODELS.failoverDead, MODELS.failover503, MODELS.formats],
      ],
      [
        "providers=backup",
        [MODELS.shared, MODELS.failoverDead, MODELS.failover503, MODELS.formats],
      ],
      ["input_modalities=text,audio", [MODELS.cloneOne, MODELS.cloneThree]],
      ["input_modalities=image", [MODELS.image]],
      ["supported_parameters=instructions", [MODELS.dialogue, MODELS.steerable]],
      ["max_price=10", [MODELS.espeak]],
      ["output_modalities=text", []],
      ["output_modalities=text,speech", CATALOG_ORDER],
      ["output_modalities=all", CATALOG_ORDER],
      ["min_output_price=0.1", []],
      ["max_output_price=0", CATALOG_ORDER],
      ["min_age_days=365", [MODELS.basic, MODELS.cloneOne]],
    ];
    for (const [query, expected] of filters) {
      it(`filters: ${query}`, async () => {
        const res = await get(`/api/v1/models?${query}`);
        expect(res.status).to.equal(200);
        expect(ids(res.body.data)).to.have.members(expected);
        expect(res.body.total_count).to.equal(expected.length);
      });
    }

    it("filters: zdr=true leaves out models with no zero-retention endpoint", async () => {
      const res = await get("/api/v1/models?zdr=true");
      expect(ids(res.body.data)).not.to.include(MODELS.leaky);
      expect(ids(res.body.data)).to.include.members([MODELS.shared, MODELS.espeak]);
    });

    it("filters: min_price leaves out what is cheaper", async () => {
      const res = await get("/api/v1/models?min_price=10");
      expect(ids(res.body.data)).to.have.members(CATALOG_ORDER.filter((m) => m !== MODELS.espeak));
    });

    it("sorts by date and by price; the LLM-only sorts keep the catalog's order", async () => {
      const newest = ids((await get("/api/v1/models?sort=newest")).body.data);
      expect(newest.slice(-2)).to.deep.equal([MODELS.cloneOne, MODELS.basic]);
      const cheap = ids((await get("/api/v1/models?sort=pricing-low-to-high")).body.data);
      expect(cheap[0]).to.equal(MODELS.espeak);
      const dear = ids((await get("/api/v1/models?sort=pricing-high-to-low")).body.data);
      expect(dear.at(-1)).to.equal(MODELS.espeak);
      const popular = ids((await get("/api/v1/models?sort=most-popular")).body.data);
      expect(popular).to.deep.equal(CATALOG_ORDER);
    });

    it("accepts the SDK's LLM-only parameters and ignores them (speech models carry no such data)", async () => {
      const res = await get(
        "/api/v1/models?context=100000&arch=llama&category=programming&distillable=true&region=eu" +
          "&min_intelligence_index=0.5&max_coding_index=90&min_tool_success_rate=0.1",
      );
      expect(res.status).to.equal(200);
      expect(ids(res.body.data)).to.deep.equal(CATALOG_ORDER);
    });

    const bad: [string, RegExp][] = [
      ["limit=0", /limit must be an integer from 1 to 1000/],
      ["limit=1001", /limit/],
      ["limit=ten", /limit/],
      ["offset=-1", /offset/],
      ["sort=best", /sort must be one of/],
      ["zdr=false", /zdr/],
      ["output_modalities=smell", /output_modalities/],
      ["output_modalities=", /output_modalities/],
      ["input_modalities=pdf", /input_modalities/],
      ["min_price=-1", /min_price/],
      ["max_price=cheap", /max_price/],
      ["context=-5", /context/],
      ["min_age_days=1.5", /min_age_days/],
      ["category=poetry", /category/],
      ["region=asia", /region/],
      ["distillable=maybe", /distillable/],
      ["min_intelligence_index=high", /min_intelligence_index/],
      ["q=a&q=b", /"q" is given more than once/],
      ["output_modality=speech", /Unknown query parameter "output_modality"/],
    ];
    for (const [query, message] of bad) {
      it(`is 400 for ${query}`, async () => {
        expectError(await get(`/api/v1/models?${query}`), 400, message);
      });
    }
  });

  describe("GET /models/count", () => {
    it("counts what the list would show", async () => {
      const all = await get("/api/v1/models/count");
      expect(all.status).to.equal(200);
      expect(all.body).to.deep.equal({ data: { count: CATALOG_ORDER.length } });
      const text = await get("/api/v1/models/count?output_modalities=text");
      expect(text.body).to.deep.equal({ data: { count: 0 } });
      const clones = await get("/api/v1/models/count?q=clone");
      expect(clones.body.data.count).to.equal(2);
    });

    it("is 400 for a bad modality and for paging parameters", async () => {
      expectError(
        await get("/api/v1/models/count?output_modalities=smell"),
        400,
        /output_modalities/,
      );
      expectError(await get("/api/v1/models/count?limit=1"), 400, /"limit"/);
    });
  });

  describe("GET /models/{author}/{slug} and /model/{author}/{slug}", () => {
    it("answers one model, by id or by an alias, in the list's shape", async () => {
      const listed = (await get("/api/v1/models")).body.data.find(
        (m: Json) => m.id === MODELS.basic,
      );
      for (const path of [
        `/api/v1/models/${MODELS.basic}`,
        `/api/v1/model/${MODELS.basic}`,
        "/api/v1/model/acme/basic-v1",
      ]) {
        const res = await get(path);
        expect(res.status, path).to.equal(200);
        expect(res.body.data, path).to.deep.equal(listed);
      }
    });

    it("is 404 naming an unknown model, 400 for a query", async () => {
      expectError(await get("/api/v1/model/acme/nope"), 404, /"acme\/nope" not found/);
      expectError(await get("/api/v1/models/acme/nope/endpoints"), 404, /acme\/nope/);
      expectError(await get(`/api/v1/model/${MODELS.basic}?x=1`), 400, /"x"/);
    });
  });

  describe("GET /models/{author}/{slug}/endpoints", () => {
    it("lists each endpoint as OpenRouter's PublicEndpoint, with Railgate's capabilities", async () => {
      const res = await get(`/api/v1/models/${MODELS.shared}/endpoints`);
      expect(res.status).to.equal(200);
      const data = res.body.data;
      expect(data).to.deep.include({ id: MODELS.shared, name: MODELS.shared });
      expect(data.architecture.output_modalities).to.deep.equal(["speech"]);
      expect(data.endpoints.map((e: Json) => e.provider_name)).to.deep.equal(["acme", "backup"]);
      const [acme, backup] = data.endpoints;
      expect(acme).to.deep.include({
        name: `acme | ${MODELS.shared}`,
        model_id: MODELS.shared,
        model_name: MODELS.shared,
        tag: "acme",
        context_length: 10_000,
        status: 0,
        quantization: null,
        supports_voice_cloning: false,
        supports_implicit_caching: false,
      });
      expect(acme.pricing).to.include({ prompt: "0.00002", completion: "0" });
      expect(acme.data_policy.zero_data_retention).to.equal(false);
      expect(backup.data_policy.zero_data_retention).to.equal(true);
      const clone = await get(`/api/v1/models/${MODELS.cloneOne}/endpoints`);
      expect(clone.body.data.endpoints[0].supports_voice_cloning).to.equal(true);
    });
  });
});
