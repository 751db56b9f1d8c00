import { expect } from "chai";
import { costMicros, MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";

const TEXT = "Usage test.";
const usd = (micros: number) => micros / 1_000_000;

describe("enforcement: key usage and credit totals (OpenRouter's fields)", () => {
  const w = useWorld();

  it("a key's usage is what it spent, per window, with BYOK apart; other keys are untouched", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { limit: 1 });
    const bystander = await w.gw.key(ws);
    for (const model of [MODELS.fast, MODELS.fast, MODELS.byok]) {
      const res = await w.gw.speak(key, { model, input: TEXT });
      expectAudio(res);
      await w.gw.generation(key, res);
    }
    const spent = usd(2 * costMicros(TEXT));
    const byok = usd(costMicros(TEXT));
    const expected = {
      usage: spent,
      usage_daily: spent,
      usage_weekly: spent,
      usage_monthly: spent,
      byok_usage: byok,
      byok_usage_daily: byok,
      byok_usage_weekly: byok,
      byok_usage_monthly: byok,
      limit: 1,
      limit_remaining: 1 - spent,
      limit_reset: null,
      include_byok_in_limit: false,
    };
    const one = await w.gw.admin.get(`/api/v1/keys/${key.hash}`);
    expect(one.status).to.equal(200);
    expect(one.body.data).to.include(expected);
    const list = await w.gw.admin.get(`/api/v1/keys?workspace_id=${ws.id}`);
    // biome-ignore lint/suspicious/noExplicitAny: key JSON
    const byHash = new Map(list.body.data.map((k: any) => [k.hash, k]));
    expect(byHash.get(key.hash)).to.include(expected);
    expect(byHash.get(bystander.hash)).to.include({
      usage: 0,
      byok_usage: 0,
      limit_remaining: null,
    });
    const me = await new Api(w.gw.url(), key.secret).get("/api/v1/key");
    expect(me.status).to.equal(200);
    expect(me.body.data).to.include({ ...expected, is_management_key: false });
  });

  it("GET /key names the regions the key's guardrails allow together", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await w.gw.setDefault(ws, { allowed_data_regions: ["europe", "us"] });
    const g = await w.gw.guardrail(ws, { name: "EU only", allowed_data_regions: ["europe"] });
    await w.gw.assignKeys(g, key);
    const me = await new Api(w.gw.url("europe"), key.secret).get("/api/v1/key");
    expect(me.status).to.equal(200);
    expect(me.body.data.allowed_data_regions).to.deep.equal(["europe"]);
  });

  it("GET /credits: credits added and what they paid for, per workspace and for the organization", async () => {
    const before = await w.gw.admin.get("/api/v1/credits");
    expect(before.status).to.equal(200);
    const ws = await w.gw.workspace();
    const unmetered = await w.gw.admin.get(`/api/v1/credits?workspace_id=${ws.id}`);
    expect(unmetered.body.data).to.deep.include({
      total_credits: 0,
      total_usage: 0,
      balance_usd: null,
      metered: false,
    });
    await w.gw.addCredits(ws, 0.5);
    await w.gw.addCredits(ws, -0.1);
    const key = await w.gw.key(ws);
    const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT });
    expectAudio(res);
    await w.gw.generation(key, res);
    const cost = usd(costMicros(TEXT));
    const one = await w.gw.admin.get(`/api/v1/credits?workspace_id=${ws.id}`);
    expect(one.status).to.equal(200);
    expect(one.body.data.total_credits).to.be.closeTo(0.4, 1e-9);
    expect(one.body.data.total_usage).to.be.closeTo(cost, 1e-9);
    expect(one.body.data.balance_usd).to.be.closeTo(0.4 - cost, 1e-9);
    const perWorkspace = await w.gw.admin.get(`/api/v1/workspaces/${ws.id}/credits`);
    expect(perWorkspace.body.data).to.deep.include({
      total_credits: one.body.data.total_credits,
      total_usage: one.body.data.total_usage,
    });
    const after = await w.gw.admin.get("/api/v1/credits");
    expect(after.body.data.workspace_id).to.equal(null);
    expect(after.body.data.total_credits - before.body.data.total_credits).to.be.closeTo(0.4, 1e-9);
    expect(after.body.data.total_usage - before.body.data.total_usage).to.be.closeTo(cost, 1e-9);
  });

  it("GET /credits is for management keys, and names a bad query", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    expectError(await new Api(w.gw.url(), key.secret).get("/api/v1/credits"), 403);
    expectError(await new Api(w.gw.url()).get("/api/v1/credits"), 401);
    expectError(await w.gw.admin.get("/api/v1/credits?workspace_id="), 400, /workspace_id/);
    expectError(await w.gw.admin.get("/api/v1/credits?workspace=x"), 400, /"workspace"/);
    expectError(
      await w.gw.admin.get("/api/v1/credits?workspace_id=5f0c7a2e-0000-4000-8000-000000000000"),
      404,
    );
  });
});
