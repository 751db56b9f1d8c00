import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { sleep } from "../kit/poll.js";

// biome-ignore lint/suspicious/noExplicitAny: model JSON
type Json = any;

/** model id -> its endpoints' providers, as a list answers them. */
function providersByModel(models: Json[]): Record<string, string[]> {
  return Object.fromEntries(
    models.map((m: Json) => [m.id, m.endpoints.map((e: Json) => e.provider)]),
  );
}

describe("GET /api/v1/models/user: the models a key's guardrails leave it", () => {
  const w = useWorld();

  it("an ungoverned key sees the whole catalog, as /models lists it", async () => {
    const key = await w.gw.key(await w.gw.workspace());
    const mine = await new Api(w.gw.url(), key.secret).get("/api/v1/models/user");
    expect(mine.status).to.equal(200);
    const all = await w.gw.admin.withKey(undefined).get("/api/v1/models");
    expect(mine.body).to.deep.equal(all.body);
  });

  it("leaves out refused models and, within the rest, the endpoints the guardrails exclude", async () => {
    const { ws, key } = await w.gw.governedKey({
      allowed_models: [MODELS.openai, MODELS.fast, MODELS.paidTrainer],
      enforce_zdr_openai: true,
    });
    // The workspace default adds its own rule: no paid endpoint that trains on data.
    await w.gw.setDefault(ws, { enable_paid_model_training: false });
    const res = await new Api(w.gw.url(), key.secret).get("/api/v1/models/user");
    expect(res.status).to.equal(200);
    expect(providersByModel(res.body.data)).to.deep.equal({
      [MODELS.openai]: ["oai-zdr"],
      [MODELS.fast]: ["fast"],
    });
    expect(res.body.total_count).to.equal(2);
    // The same filters and paging as /models.
    const paged = await new Api(w.gw.url(), key.secret).get("/api/v1/models/user?limit=1");
    expect(paged.body.data).to.have.length(1);
    expect(paged.body.links.next).to.equal("/api/v1/models/user?limit=1&offset=1");
    const searched = await new Api(w.gw.url(), key.secret).get("/api/v1/models/user?q=fast");
    expect(searched.body.data.map((m: Json) => m.id)).to.deep.equal([MODELS.fast]);
  });

  it("follows a guardrail change (the policy cache is invalidated)", async () => {
    const { key, guardrailId } = await w.gw.governedKey({ allowed_models: [MODELS.fast] });
    const api = new Api(w.gw.url(), key.secret);
    expect((await api.get("/api/v1/models/user")).body.total_count).to.equal(1);
    await w.gw.patchGuardrail(guardrailId, { allowed_models: [MODELS.fast, MODELS.steerable] });
    let ids: string[] = [];
    for (let i = 0; i < 50 && ids.length !== 2; i++) {
      if (i > 0) await sleep(20);
      ids = (await api.get("/api/v1/models/user")).body.data.map((m: Json) => m.id);
    }
    expect(ids.sort()).to.deep.equal([MODELS.fast, MODELS.steerable].sort());
  });

  it("needs a standard key (401 without one, 403 for a management key) and a valid query (400)", async () => {
    expectError(await w.gw.admin.withKey(undefined).get("/api/v1/models/user"), 401);
    expectError(await w.gw.admin.get("/api/v1/models/user"), 403, /standard API key/);
    const key = await w.gw.key(await w.gw.workspace());
    const api = new Api(w.gw.url(), key.secret);
    expectError(await api.get("/api/v1/models/user?bogus=1"), 400, /bogus/);
    expectError(await api.get("/api/v1/models/user?limit=0"), 400, /limit/);
    expectError(
      await api.get("/api/v1/models/user?output_modalities=smell"),
      400,
      /output_modalities/,
    );
  });
});

describe("GET /api/v1/endpoints/zdr: every zero-data-retention endpoint", () => {
  const w = useWorld();

  it("lists exactly the catalog's ZDR endpoints, as PublicEndpoint objects, without a key", async () => {
    const anon = w.gw.admin.withKey(undefined);
    const res = await anon.get("/api/v1/endpoints/zdr");
    expect(res.status).to.equal(200);
    const models = (await anon.get("/api/v1/models")).body.data;
    const expected = models.flatMap((m: Json) =>
      m.endpoints
        .filter((e: Json) => e.data_policy.zero_data_retention)
        .map((e: Json) => `${e.provider} | ${m.id}`),
    );
    expect(res.body.data.map((e: Json) => e.name)).to.deep.equal(expected);
    expect(expected).to.include(`oai-zdr | ${MODELS.openai}`);
    expect(expected).not.to.include(`oai-retaining | ${MODELS.openai}`);
    const zdr = res.body.data.find((e: Json) => e.provider_name === "oai-zdr");
    expect(zdr).to.include({ model_id: MODELS.openai, tag: "oai-zdr" });
    expect(zdr.pricing.prompt).to.equal("0.00002");
  });

  it("takes no query parameters (400 naming one)", async () => {
    expectError(await w.gw.admin.get("/api/v1/endpoints/zdr?model=x"), 400, /model/);
  });
});
