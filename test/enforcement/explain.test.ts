import { expect } from "chai";
import { costMicros, MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";

const TEXT = "Explain me.";

describe("enforcement: GET /api/v1/keys/{hash}/explain", () => {
  const w = useWorld();

  async function governed() {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { member_user_id: "user-explain" });
    const keyGuardrail = await w.gw.guardrail(ws, {
      name: "Key rules",
      allowed_data_regions: ["europe", "global"],
      enforce_zdr_openai: true,
      limit_usd: 1,
      reset_interval: "daily",
    });
    await w.gw.assignKeys(keyGuardrail, key);
    const memberGuardrail = await w.gw.guardrail(ws, {
      name: "Member rules",
      ignored_models: [MODELS.paidTrainer],
      content_filter_builtins: [{ slug: "email", action: "redact" }],
    });
    await w.gw.assignMembers(memberGuardrail, "user-explain");
    await w.gw.setDefault(ws, {
      allowed_data_regions: ["europe", "us"],
      limit_usd: 2,
      reset_interval: "weekly",
    });
    return { ws, key, keyGuardrail, memberGuardrail };
  }

  it("shows each contributing guardrail with its source and what it contributes", async () => {
    const { ws, key, keyGuardrail, memberGuardrail } = await governed();
    const data = await w.gw.explain(key);
    expect(data.key_hash).to.equal(key.hash);
    expect(data.workspace_id).to.equal(ws.id);
    expect(
      data.guardrails.map((g: { source: string; id: string; name: string }) => [
        g.source,
        g.id,
        g.name,
      ]),
    ).to.deep.equal([
      ["key", keyGuardrail, "Key rules"],
      ["member", memberGuardrail, "Member rules"],
      ["workspace_default", ws.defaultGuardrailId, `Workspace ${ws.id} Default`],
    ]);
    const [k, m, d] = data.guardrails.map((g: { contributes: string[] }) => g.contributes);
    expect(k).to.include.members([
      "allowed_data_regions: europe, global",
      "enforce_zdr: openai",
      "limit_usd: 1",
    ]);
    expect(m).to.include.members([
      `ignored_models: ${MODELS.paidTrainer}`,
      "content_filter_builtins: email",
    ]);
    expect(d).to.include.members(["allowed_data_regions: europe, us", "limit_usd: 2"]);
  });

  it("names the guardrail that withholds a permission", async () => {
    const { ws, key } = await w.gw.governedKey({
      enable_free_model_training: true,
      enable_paid_model_training: true,
      enable_free_model_publication: true,
    });
    await w.gw.setDefault(ws, {
      enable_free_model_training: true,
      enable_free_model_publication: true,
      allow_safety_retention_google: false,
    });
    const data = await w.gw.explain(key);
    const [k, d] = data.guardrails.map((g: { contributes: string[] }) => g.contributes);
    expect(k.filter((c: string) => c.includes(": false"))).to.deep.equal([]);
    expect(d).to.include.members([
      "enable_paid_model_training: false",
      "allow_safety_retention_google: false",
    ]);
    expect(d).to.not.include("enable_free_model_training: false");
    expect(data.effective_policy.enable_paid_model_training).to.equal(false);
  });

  it("shows the effective policy", async () => {
    const { key, memberGuardrail } = await governed();
    const p = (await w.gw.explain(key)).effective_policy;
    expect(p.allowed_data_regions).to.deep.equal(["europe"]);
    expect(p.allowed_models).to.equal(null);
    expect(p.ignored_models).to.deep.equal([MODELS.paidTrainer]);
    expect(p.enforce_zdr).to.deep.equal({
      anthropic: false,
      openai: true,
      google: false,
      xai: false,
      other: false,
    });
    expect(p.enable_free_model_training).to.equal(false);
    expect(p.content_filters).to.deep.equal([
      { slug: "email", action: "redact", label: "[EMAIL]", guardrail_id: memberGuardrail },
    ]);
  });

  it("region_allowed follows the effective regions", async () => {
    const { key } = await governed();
    const us = await w.gw.explain(key, "?region=us");
    expect(us.region).to.equal("us");
    expect(us.region_allowed).to.equal(false);
    expect((await w.gw.explain(key, "?region=europe")).region_allowed).to.equal(true);
    expect((await w.gw.explain(key)).region_allowed).to.equal(null);
  });

  it("lists every budget counter of the key and its member, with what each spent in its window", async () => {
    const { ws, key, keyGuardrail } = await governed();
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }, "europe"));
    const budgets = (await w.gw.explain(key)).budgets;
    // 11 characters at $10 per million: $0.00011.
    const spent = 0.00011;
    expect(costMicros(TEXT) / 1_000_000).to.equal(spent);
    // The default is a maximum per member (user-explain) and per key; the key guardrail is the key's own.
    expect(budgets.map((b: { scope: string }) => b.scope)).to.deep.equal([
      "workspace_default_member",
      "workspace_default_key",
      "api_key",
    ]);
    expect(budgets[0]).to.deep.include({
      guardrail_id: ws.defaultGuardrailId,
      subject: "user-explain",
      limit_usd: 2,
      reset_interval: "weekly",
      spent_usd: spent,
      remaining_usd: 2 - spent,
    });
    expect(budgets[1]).to.deep.include({
      guardrail_id: ws.defaultGuardrailId,
      subject: key.hash,
      spent_usd: spent,
    });
    expect(budgets[2]).to.deep.include({
      guardrail_id: keyGuardrail,
      subject: key.hash,
      limit_usd: 1,
      reset_interval: "daily",
      spent_usd: spent,
      remaining_usd: 1 - spent,
      include_byok_in_budgets: false,
    });
    expect(budgets[2].window).to.match(/^daily:\d{4}-\d{2}-\d{2}$/);
    // Another key of the same member: its own key counter is empty, the member's is shared.
    const sibling = await w.gw.key(ws, { member_user_id: "user-explain" });
    const theirs = (await w.gw.explain(sibling)).budgets;
    expect(theirs.map((b: { spent_usd: number }) => b.spent_usd)).to.deep.equal([spent, 0]);
  });

  it("per model: the eligible endpoints, and why each excluded one is excluded", async () => {
    const { key } = await governed();
    const data = await w.gw.explain(key, `?model=${MODELS.openai}&region=europe`);
    expect(data.models).to.have.length(1);
    const [model] = data.models;
    expect(model).to.deep.include({ model: MODELS.openai, allowed: true, reason: null });
    expect(model.endpoints.map((e: { provider: string }) => e.provider)).to.deep.equal([
      "oai-retaining",
      "oai-zdr",
    ]);
    expect(model.endpoints[0].eligible).to.equal(false);
    expect(model.endpoints[0].reason).to.match(/enforce_zdr_openai/);
    expect(model.endpoints[1]).to.deep.include({ eligible: true, reason: null });
    // What explain says is what routing does.
    expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }, "europe"), "oai-zdr");
  });

  it("names the rule that refuses a model and each training/publication exclusion", async () => {
    const { key } = await governed();
    const data = await w.gw.explain(key);
    const byId = new Map(data.models.map((m: { model: string }) => [m.model, m]));
    // biome-ignore lint/suspicious/noExplicitAny: explain JSON
    const paid: any = byId.get(MODELS.paidTrainer);
    expect(paid.allowed).to.equal(false);
    expect(paid.reason).to.match(/"Member rules".*ignored_models/);
    // biome-ignore lint/suspicious/noExplicitAny: explain JSON
    const free: any = byId.get(MODELS.freeTrainer);
    expect(free.allowed).to.equal(true);
    expect(free.endpoints[0].eligible).to.equal(false);
    expect(free.endpoints[0].reason).to.match(/enable_free_model_training/);
    // biome-ignore lint/suspicious/noExplicitAny: explain JSON
    const publisher: any = byId.get(MODELS.freePublisher);
    expect(publisher.endpoints[0].reason).to.match(/enable_free_model_publication/);
    expect(byId.has(MODELS.espeak)).to.equal(true);
  });

  it("a key with no guardrail: nothing contributes and everything is eligible", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const data = await w.gw.explain(key, "?region=us");
    expect(data.guardrails).to.deep.equal([]);
    expect(data.budgets).to.deep.equal([]);
    expect(data.region_allowed).to.equal(true);
    for (const m of data.models) {
      expect(m.allowed, m.model).to.equal(true);
      for (const e of m.endpoints) expect(e.eligible, `${m.model} ${e.provider}`).to.equal(true);
    }
  });

  it("errors: standard key 403, unknown key 404, bad region 400, unknown model 404, unknown parameter 400", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const standard = new Api(w.gw.url(), key.secret);
    expectError(await standard.get(`/api/v1/keys/${key.hash}/explain`), 403);
    expectError(await w.gw.admin.get(`/api/v1/keys/${"0".repeat(64)}/explain`), 404);
    expectError(
      await w.gw.admin.get(`/api/v1/keys/${key.hash}/explain?region=mars`),
      400,
      /region/,
    );
    expectError(
      await w.gw.admin.get(`/api/v1/keys/${key.hash}/explain?model=acme/none`),
      404,
      /acme\/none/,
    );
    expectError(await w.gw.admin.get(`/api/v1/keys/${key.hash}/explain?foo=1`), 400, /foo/);
    expectError(await w.gw.admin.get("/api/v1/keys/not-a-hash/explain"), 400);
  });
});
