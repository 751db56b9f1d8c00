import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { sharedTestDatabase } from "../kit/databases.js";
import { expectError } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, type StandardKey, useSpeechSystem } from "../kit/speech-system.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the API
type Json = any;

const SPEECH = { model: MODELS.basic, voice: "alloy", input: "Refused words." };

/** Every refused request of a known key is in the request log with its reason, billed nothing. */
describe("gateway: refused requests in the request log", function () {
  this.timeout(120_000);
  let db: SqlDatabase;
  before(async () => {
    db = await sharedTestDatabase();
  });
  const h = useSpeechSystem({ embeddedEngine: "off" }, () => db);

  /** What the database holds of a key right now (no API read, which would write queued records first). */
  async function stored(key: StandardKey) {
    const { items } = await new GenerationRecords(db).list({ keyHash: key.hash, limit: 10 });
    return items;
  }

  /** The API's records of a key, once there are `n`. */
  async function listed(key: StandardKey, n: number, query = ""): Promise<Json[]> {
    const res = await pollUntil(
      () => h.admin.get(`/api/v1/generations?key_hash=${key.hash}${query}`),
      (r: JsonResponse) => r.status === 200 && r.body.data.length >= n,
    );
    return res.body.data;
  }

  async function governedKey(fields: Record<string, unknown>) {
    const key = await h.createKey();
    const g = await h.admin.post("/api/v1/guardrails", {
      name: `refusing ${Math.random().toString(36).slice(2, 8)}`,
      workspace_id: key.workspaceId,
      ...fields,
    });
    expect(g.status, JSON.stringify(g.body)).to.equal(201);
    const a = await h.admin.post(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`, {
      key_hashes: [key.hash],
    });
    expect(a.status, JSON.stringify(a.body)).to.equal(200);
    return { key, guardrail: g.body.data as { id: string; name: string } };
  }

  it("stores a disabled key's refused request before answering 401, once, billed nothing", async () => {
    const key = await h.createKey();
    expectAudio(await h.speak(SPEECH, { key: key.secret }));
    const off = await h.admin.patch(`/api/v1/keys/${key.hash}`, { disabled: true });
    expect(off.status, JSON.stringify(off.body)).to.equal(200);
    expectError(await h.speak(SPEECH, { key: key.secret }), 401, /^API key is disabled$/);
    const refused = (await stored(key)).filter((g) => g.refusalReason !== "");
    expect(refused).to.have.length(1);
    const [g] = await listed(key, 2, "&status=refused");
    expect(g).to.include({
      status: "refused",
      refusal_reason: "api_key_disabled",
      refusal_message: "API key is disabled",
      refusal_summary: "API key is disabled",
      // Refused before its body is read: the record has no model or voice.
      model: "",
      voice: "",
      cost_usd: 0,
      characters: 0,
      guardrail_id: null,
    });
  });

  it("stores an expired key's refused request with the instant it expired", async () => {
    const expiresAt = new Date(Math.ceil((Date.now() + 1_500) / 1000) * 1000);
    const key = await h.createKey({ expires_at: expiresAt.toISOString() });
    while (Date.now() <= expiresAt.getTime()) await sleep(100);
    expectError(await h.speak(SPEECH, { key: key.secret }), 401, /^API key expired at/);
    const [record] = await stored(key);
    expect(record?.refusalReason).to.equal("api_key_expired");
    expect(record?.refusalMessage).to.match(/^API key expired at/);
  });

  it("stores a region refusal naming the guardrail whose allowed_data_regions left it out", async () => {
    const { key, guardrail } = await governedKey({ allowed_data_regions: ["us"] });
    expectError(await h.speak(SPEECH, { key: key.secret }), 403, /not allowed by guardrail/);
    const [record] = await stored(key);
    expect(record).to.include({ refusalReason: "region_not_allowed", guardrailId: guardrail.id });
    // The body is never read: one that is not even JSON gets the same refusal and record.
    const res = await fetch(`${h.baseUrl}/api/v1/audio/speech`, {
      method: "POST",
      headers: { authorization: `Bearer ${key.secret}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(res.status).to.equal(403);
    const both = await stored(key);
    expect(both.map((g) => g.refusalReason)).to.deep.equal([
      "region_not_allowed",
      "region_not_allowed",
    ]);
  });

  it("logs an unknown model and a rate limit as refused, with their reasons in words", async () => {
    const key = await h.createKey({ rate_limit_per_minute: 1 });
    expectError(
      await h.speak({ ...SPEECH, model: "nobody/nothing" }, { key: key.secret }),
      404,
      /not found/,
    );
    expectAudio(await h.speak(SPEECH, { key: key.secret }));
    expectError(await h.speak(SPEECH, { key: key.secret }), 429, /^Rate limit exceeded/);
    const records = await listed(key, 3);
    const reasons = records.map((g) => g.refusal_reason);
    expect(reasons).to.deep.equal(["rate_limited", null, "model_not_found"]);
    expect(records[2]).to.include({ model: "nobody/nothing", status: "refused" });
    expect(records[0].refusal_summary).to.match(/^Rate limit exceeded: 1 requests per minute/);
  });

  it("never records a request without a valid key", async () => {
    const before = (await h.admin.get("/api/v1/generations?status=refused&limit=100")).body.data;
    expectError(await h.speak(SPEECH, { key: "sk-rg-nobody-has-this-key" }), 401);
    expectError(await h.speak(SPEECH, { key: null }), 401);
    const after = (await h.admin.get("/api/v1/generations?status=refused&limit=100")).body.data;
    expect(after.map((g: Json) => g.id)).to.deep.equal(before.map((g: Json) => g.id));
  });

  it("gives a budget refusal its figures and words, naming the guardrail", async () => {
    const { key, guardrail } = await governedKey({ limit_usd: 0, reset_interval: "daily" });
    expectError(await h.speak(SPEECH, { key: key.secret }), 403, /Budget/);
    const [g] = await listed(key, 1);
    expect(g).to.include({ refusal_reason: "budget_exceeded", guardrail_id: guardrail.id });
    expect(g.budget_refusal).to.include({
      guardrail_id: guardrail.id,
      guardrail_name: guardrail.name,
      policy: false,
      interval: "daily",
      scope: "key",
      spent_usd: 0,
      limit_usd: 0,
    });
    expect(g.budget_refusal.request_usd).to.be.above(0);
    expect(g.refusal_summary).to.equal(
      `Daily budget of guardrail ${guardrail.name} used up: $0 of $0 spent (this API key); ` +
        `this request could cost up to $${g.budget_refusal.request_usd}`,
    );
  });

  it("filters by refusal reason, counts every match, and counts refusals by reason in usage", async () => {
    const { key } = await governedKey({ limit_usd: 0, reset_interval: "monthly" });
    for (let i = 0; i < 3; i++)
      expectError(await h.speak(SPEECH, { key: key.secret }), 403, /Budget/);
    expectError(
      await h.speak({ ...SPEECH, model: "nobody/nothing" }, { key: key.secret }),
      404,
      /not found/,
    );
    await listed(key, 4);
    const page = await h.admin.get(
      `/api/v1/generations?key_hash=${key.hash}&refusal_reason=budget_exceeded&limit=2`,
    );
    expect(page.status, JSON.stringify(page.body)).to.equal(200);
    expect(page.body.data).to.have.length(2);
    expect(page.body.data.every((g: Json) => g.refusal_reason === "budget_exceeded")).to.equal(
      true,
    );
    expect(page.body).to.include({ total_count: 3, total_count_is_estimate: false });
    const all = await h.admin.get(`/api/v1/generations?key_hash=${key.hash}`);
    expect(all.body.total_count).to.equal(4);
    const usage = await h.admin.get(
      `/api/v1/usage?group_by=key&granularity=hour&workspace_id=${key.workspaceId}`,
    );
    expect(usage.status, JSON.stringify(usage.body)).to.equal(200);
    const mine = usage.body.data.filter((p: Json) => p.group === key.hash);
    const sum = (f: (p: Json) => number) => mine.reduce((n: number, p: Json) => n + f(p), 0);
    expect(sum((p) => p.refused)).to.equal(4);
    expect(sum((p) => p.refused_by_reason.budget_exceeded ?? 0)).to.equal(3);
    expect(sum((p) => p.refused_by_reason.model_not_found ?? 0)).to.equal(1);
  });

  it("searches on the server by generation id, key name and model", async () => {
    const name = `searchable ${Math.random().toString(36).slice(2, 8)}`;
    const key = await h.createKey({ name });
    const served = await h.speak(SPEECH, { key: key.secret });
    expectAudio(served);
    const id = String(served.headers.get("x-generation-id"));
    expectError(
      await h.speak({ ...SPEECH, model: "nobody/searched-model" }, { key: key.secret }),
      404,
    );
    await listed(key, 2);
    const byName = await h.admin.get(
      `/api/v1/generations?q=${encodeURIComponent(name.toUpperCase())}`,
    );
    expect(byName.body.data.map((g: Json) => g.key_hash)).to.deep.equal([key.hash, key.hash]);
    expect(byName.body.total_count).to.equal(2);
    const byId = await h.admin.get(`/api/v1/generations?q=${id}`);
    expect(byId.body.data.map((g: Json) => g.id)).to.deep.equal([id]);
    const byModel = await h.admin.get("/api/v1/generations?q=searched-mod");
    expect(byModel.body.data.map((g: Json) => g.model)).to.deep.equal(["nobody/searched-model"]);
    // LIKE's wildcards are searched for as themselves.
    const wild = await h.admin.get(`/api/v1/generations?q=%25&key_hash=${key.hash}`);
    expect(wild.body).to.include({ total_count: 0 });
    // A standard key searches its own records only.
    const own = await h.api.get(`/api/v1/generations?q=${encodeURIComponent(name)}`);
    expect(own.body.data).to.deep.equal([]);
  });

  it("refuses a malformed refusal_reason and an overlong q with 400 naming them", async () => {
    expectError(
      await h.admin.get("/api/v1/generations?refusal_reason=Budget-Exceeded"),
      400,
      /^refusal_reason must be/,
    );
    expectError(
      await h.admin.get(`/api/v1/generations?q=${"x".repeat(201)}`),
      400,
      /^q must be at most 200 characters/,
    );
  });
});
