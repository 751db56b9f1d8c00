import { expect } from "chai";
import { costMicros, ESPEAK_PRICE, MODELS, ZDR_PRICE } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { Api } from "../kit/http.js";

const TEXT = "Credit test.";
const COST = costMicros(TEXT);
const usd = (micros: number) => micros / 1_000_000;

describe("enforcement: workspace credits", () => {
  const w = useWorld();

  it("a workspace without a balance is unmetered", async () => {
    const ws = await w.gw.workspace();
    const res = await w.gw.admin.get(`/api/v1/workspaces/${ws.id}/credits`);
    expect(res.status).to.equal(200);
    expect(res.body.data).to.deep.include({ workspace_id: ws.id, balance_usd: null });
    const key = await w.gw.key(ws);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expect(await w.gw.credits(ws)).to.equal(null);
  });

  it("POST sets the balance; a request takes exactly its cost (characters × price / 1e6)", async () => {
    const ws = await w.gw.workspace();
    const res = await w.gw.admin.post(`/api/v1/workspaces/${ws.id}/credits`, { amount_usd: 0.001 });
    expect(res.status).to.equal(200);
    expect(res.body.data.balance_usd).to.equal(0.001);
    expect(await w.gw.credits(ws)).to.equal(0.001);
    const key = await w.gw.key(ws);
    const input = "Grüße aus Köln, café!";
    const served = await w.gw.speak(key, { model: MODELS.fast, input });
    expectAudio(served);
    const cost = costMicros(input);
    expect(cost).to.equal([...input].length * 10);
    expect(await w.gw.credits(ws)).to.equal(usd(1000 - cost));
    const record = await w.gw.generation(key, served);
    expect(record.characters).to.equal([...input].length);
    expect(record.cost_usd).to.equal(usd(cost));
    // The embedded engine is metered at its own price.
    expectAudio(await w.gw.speak(key, { model: MODELS.espeak, input: TEXT }), "railgate");
    expect(await w.gw.credits(ws)).to.equal(usd(1000 - cost - costMicros(TEXT, ESPEAK_PRICE)));
  });

  it("402 when the worst case exceeds what is left; the balance is charged what was really spent", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const worst = costMicros(TEXT, ZDR_PRICE);
    // Enough for the first (cheaper) endpoint, not for the dearest eligible one.
    await w.gw.addCredits(ws, usd(worst - 1));
    const refused = await w.gw.speak(key, { model: MODELS.openai, input: TEXT });
    expectError(refused, 402, /^Insufficient credits/);
    expect(w.fakes["oai-retaining"].requests).to.have.length(0);
    expect(await w.gw.credits(ws)).to.equal(usd(worst - 1));
    await w.gw.addCredits(ws, usd(1));
    expectAudio(await w.gw.speak(key, { model: MODELS.openai, input: TEXT }), "oai-retaining");
    // Reserved the worst case, charged the endpoint that served.
    expect(await w.gw.credits(ws)).to.equal(usd(worst - COST));
    expect((await w.gw.explain(key)).credits_usd).to.equal(usd(worst - COST));
  });

  it("a refused request costs nothing, and a smaller one still fits", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await w.gw.addCredits(ws, usd(COST - 1));
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 402);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "Tiny." }));
    expect(await w.gw.credits(ws)).to.equal(usd(COST - 1 - costMicros("Tiny.")));
  });

  it("200 concurrent requests never overdraw the balance, and it ends exact", async function () {
    this.timeout(120_000);
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const fits = 20;
    const funded = COST * fits + COST / 2;
    await w.gw.addCredits(ws, usd(funded));
    const results = await Promise.all(
      Array.from({ length: 200 }, () => w.gw.speak(key, { model: MODELS.fast, input: TEXT })),
    );
    const statuses = results.map((r) => r.status);
    expect(new Set(statuses)).to.deep.equal(new Set([200, 402]));
    const successes = statuses.filter((s) => s === 200).length;
    expect(successes).to.equal(fits);
    expect(w.fakes.fast.requests).to.have.length(successes);
    expect(await w.gw.credits(ws)).to.equal(usd(funded - successes * COST));
  });

  it("BYOK endpoints never consume credits", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await w.gw.addCredits(ws, usd(COST - 1));
    for (let i = 0; i < 3; i++)
      expectAudio(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }), "byok-provider");
    expect(await w.gw.credits(ws)).to.equal(usd(COST - 1));
  });

  it("free endpoints run on an empty balance", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await w.gw.addCredits(ws, usd(5));
    await w.gw.addCredits(ws, -usd(5));
    expect(await w.gw.credits(ws)).to.equal(0);
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 402);
    expectAudio(await w.gw.speak(key, { model: MODELS.freePublisher, input: TEXT }));
  });

  it("credits belong to their workspace", async () => {
    const metered = await w.gw.workspace();
    const other = await w.gw.workspace();
    await w.gw.addCredits(metered, usd(1));
    const key = await w.gw.key(other);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expect(await w.gw.credits(metered)).to.equal(usd(1));
    expect(await w.gw.credits(other)).to.equal(null);
  });

  it("amount 0 or not a number is 400; an unknown workspace is 404; a standard key is 403", async () => {
    const ws = await w.gw.workspace();
    for (const body of [{ amount_usd: 0 }, { amount_usd: "5" }, {}]) {
      expectError(await w.gw.admin.post(`/api/v1/workspaces/${ws.id}/credits`, body), 400);
    }
    expect(await w.gw.credits(ws)).to.equal(null);
    const unknown = "00000000-0000-4000-8000-000000000000";
    expectError(await w.gw.admin.get(`/api/v1/workspaces/${unknown}/credits`), 404);
    expectError(
      await w.gw.admin.post(`/api/v1/workspaces/${unknown}/credits`, { amount_usd: 1 }),
      404,
    );
    const key = await w.gw.key(ws);
    const standard = new Api(w.gw.url(), key.secret);
    expectError(await standard.get(`/api/v1/workspaces/${ws.id}/credits`), 403);
  });
});

describe("enforcement: key credit limit", () => {
  const w = useWorld();

  it('a key over its limit gets 403 "Key limit exceeded"; other keys are unaffected; raising the limit re-opens it', async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { limit: usd(COST * 2) });
    const other = await w.gw.key(ws);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT });
    // OpenRouter's answer for a key over its own limit (not 402: the account still has credits).
    expectError(res, 403, /^Key limit exceeded: \$0\.00024 of the key's limit of \$0\.00024 used$/);
    expect(w.fakes.fast.requests).to.have.length(2);
    expectAudio(await w.gw.speak(other, { model: MODELS.fast, input: TEXT }));
    const patched = await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { limit: usd(COST * 3) });
    expect(patched.status).to.equal(200);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectError(
      await w.gw.speak(key, { model: MODELS.fast, input: TEXT }),
      403,
      /^Key limit exceeded/,
    );
  });

  it("include_byok_in_limit true: BYOK spend counts toward the limit and limit_remaining; false: it does not", async () => {
    const ws = await w.gw.workspace();
    const counted = await w.gw.key(ws, { limit: usd(COST * 2), include_byok_in_limit: true });
    const apart = await w.gw.key(ws, { limit: usd(COST * 2) });
    const byok = (key: typeof counted) => w.gw.speak(key, { model: MODELS.byok, input: TEXT });
    for (const key of [counted, counted, apart, apart, apart]) {
      const res = await byok(key);
      expectAudio(res, "byok-provider");
      await w.gw.generation(key, res);
    }
    const shown = async (key: typeof counted) =>
      (await w.gw.admin.get(`/api/v1/keys/${key.hash}`)).body.data;
    expect(await shown(counted)).to.include({
      include_byok_in_limit: true,
      usage: 0,
      byok_usage: usd(COST * 2),
      limit_remaining: 0,
    });
    expect(await shown(apart)).to.include({
      include_byok_in_limit: false,
      usage: 0,
      byok_usage: usd(COST * 3),
      limit_remaining: usd(COST * 2),
    });
    const served = w.fakes["byok-provider"].requests.length;
    expectError(
      await byok(counted),
      403,
      /^Key limit exceeded: \$0\.00024 of the key's limit of \$0\.00024 used \(credit and BYOK spend: include_byok_in_limit\)$/,
    );
    // Credit spend shares the limit with BYOK spend.
    expectError(await w.gw.speak(counted, { model: MODELS.fast, input: TEXT }), 403, /^Key limit/);
    expect(w.fakes["byok-provider"].requests).to.have.length(served);
    const me = await new Api(w.gw.url(), counted.secret).get("/api/v1/key");
    expect(me.body.data).to.include({ include_byok_in_limit: true, limit_remaining: 0 });

    // Changed mid-window, the flag applies from the next request on the spend already counted.
    const off = await w.gw.admin.patch(`/api/v1/keys/${counted.hash}`, {
      include_byok_in_limit: false,
    });
    expect(off.status).to.equal(200);
    expect(off.body.data).to.include({
      include_byok_in_limit: false,
      limit_remaining: usd(COST * 2),
    });
    expectAudio(await byok(counted), "byok-provider");
    const on = await w.gw.admin.patch(`/api/v1/keys/${apart.hash}`, {
      include_byok_in_limit: true,
    });
    expect(on.body.data).to.include({ include_byok_in_limit: true, limit_remaining: 0 });
    expectError(await byok(apart), 403, /^Key limit exceeded: \$0\.00036 of/);
  });

  it("include_byok_in_limit must be true or false", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { limit: 1 });
    expectError(
      await w.gw.admin.patch(`/api/v1/keys/${key.hash}`, { include_byok_in_limit: null }),
      400,
      /^include_byok_in_limit must be true or false, not null$/,
    );
    expectError(
      await w.gw.admin.post("/api/v1/keys", {
        name: "byok flag",
        workspace_id: ws.id,
        include_byok_in_limit: "yes",
      }),
      400,
      /^include_byok_in_limit must be true or false, got string$/,
    );
  });

  it("a request that would cross the limit is refused before it runs", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { limit: usd(COST - 1) });
    expectError(
      await w.gw.speak(key, { model: MODELS.fast, input: TEXT }),
      403,
      /^Key limit exceeded/,
    );
    expect(w.fakes.fast.requests).to.have.length(0);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "Tiny." }));
  });
});
