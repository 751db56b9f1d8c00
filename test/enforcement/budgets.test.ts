import { expect } from "chai";
import { costMicros, MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

/** 12 characters: 120 micro-dollars on every paid upstream endpoint. */
const TEXT = "Budget test.";
const COST = costMicros(TEXT);
const usd = (micros: number) => micros / 1_000_000;

describe("enforcement: guardrail budgets", () => {
  const w = useWorld();

  // biome-ignore lint/suspicious/noExplicitAny: explain JSON
  const spent = (explained: any, guardrailId: string): number =>
    explained.budgets.find((b: { guardrail_id: string }) => b.guardrail_id === guardrailId)
      .spent_usd;

  it("requests succeed until the budget is spent, then 403 naming the guardrail", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      name: "Tiny daily",
      limit_usd: usd(COST * 4 + COST / 2),
      reset_interval: "daily",
    });
    for (let i = 0; i < 4; i++)
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT });
    expectError(res, 403, /^Budget of guardrail "Tiny daily" .*exhausted.*per day.*limit_usd/);
    expect(w.fakes.fast.requests).to.have.length(4);
    expect(spent(await w.gw.explain(key), guardrailId)).to.equal(usd(COST * 4));
  });

  it("a request that would cross the limit is refused even if some budget is left", async () => {
    const { key } = await w.gw.governedKey({ limit_usd: usd(COST - 1), reset_interval: "weekly" });
    expectError(
      await w.gw.speak(key, { model: MODELS.fast, input: TEXT }),
      403,
      /Budget of guardrail/,
    );
    // A shorter text fits.
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: "Short." }));
  });

  it("limit_usd 0 refuses every paid request", async () => {
    const { key } = await w.gw.governedKey({ limit_usd: 0, reset_interval: "monthly" });
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    expect(w.fakes.fast.requests).to.have.length(0);
  });

  it("budgets of two guardrails are checked separately: the smaller refuses", async () => {
    const { ws, key, guardrailId } = await w.gw.governedKey({
      limit_usd: usd(COST * 10),
      reset_interval: "daily",
    });
    await w.gw.setDefault(ws, { limit_usd: usd(COST * 2), reset_interval: "daily" });
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const res = await w.gw.speak(key, { model: MODELS.fast, input: TEXT });
    expectError(res, 403, new RegExp(`Budget of guardrail "Workspace ${ws.id} Default"`));
    const explained = await w.gw.explain(key);
    expect(spent(explained, guardrailId)).to.equal(usd(COST * 2));
    expect(spent(explained, ws.defaultGuardrailId)).to.equal(usd(COST * 2));
  });

  it("a workspace default budget is not pooled: every key of the workspace spends its own", async () => {
    const ws = await w.gw.workspace();
    await w.gw.setDefault(ws, { limit_usd: usd(COST * 2), reset_interval: "daily" });
    const a = await w.gw.key(ws);
    const b = await w.gw.key(ws);
    expectAudio(await w.gw.speak(a, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(b, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(a, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(b, { model: MODELS.fast, input: TEXT }));
    expectError(await w.gw.speak(a, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    expectError(await w.gw.speak(b, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
  });

  it("include_byok_in_budgets false: BYOK spend does not count and keeps succeeding", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      limit_usd: usd(COST * 2),
      reset_interval: "daily",
      include_byok_in_budgets: false,
    });
    for (let i = 0; i < 4; i++)
      expectAudio(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }), "byok-provider");
    expect(spent(await w.gw.explain(key), guardrailId)).to.equal(0);
    // Service-credit spend still counts.
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    // ...and even an exhausted budget does not stop BYOK traffic it does not count.
    expectAudio(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }));
  });

  it("a limit_usd of 0 that leaves BYOK out refuses paid requests, not BYOK ones", async () => {
    const excluded = await w.gw.governedKey({ limit_usd: 0, reset_interval: "daily" });
    expectAudio(await w.gw.speak(excluded.key, { model: MODELS.byok, input: TEXT }));
    expectError(await w.gw.speak(excluded.key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    const included = await w.gw.governedKey({
      limit_usd: 0,
      reset_interval: "daily",
      include_byok_in_budgets: true,
    });
    expectError(await w.gw.speak(included.key, { model: MODELS.byok, input: TEXT }), 403, /Budget/);
  });

  it("include_byok_in_budgets true: BYOK spend counts", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      limit_usd: usd(COST * 2),
      reset_interval: "daily",
      include_byok_in_budgets: true,
    });
    expectAudio(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }));
    expectAudio(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }));
    expectError(await w.gw.speak(key, { model: MODELS.byok, input: TEXT }), 403, /Budget/);
    expect(w.fakes["byok-provider"].requests).to.have.length(2);
    expect(spent(await w.gw.explain(key), guardrailId)).to.equal(usd(COST * 2));
  });

  it("200 concurrent requests never overshoot: successes × cost ≤ limit, and explain agrees", async function () {
    this.timeout(120_000);
    const fits = 20;
    const limitMicros = COST * fits + COST / 2;
    const { key, guardrailId } = await w.gw.governedKey({
      limit_usd: usd(limitMicros),
      reset_interval: "daily",
    });
    const results = await Promise.all(
      Array.from({ length: 200 }, () => w.gw.speak(key, { model: MODELS.fast, input: TEXT })),
    );
    const statuses = results.map((r) => r.status);
    expect(
      statuses.filter((s) => s >= 500),
      "no 5xx",
    ).to.deep.equal([]);
    expect(new Set(statuses)).to.deep.equal(new Set([200, 403]));
    for (const r of results.filter((x) => x.status === 403)) expectError(r, 403, /Budget/);
    const successes = statuses.filter((s) => s === 200).length;
    expect(successes * COST).to.be.at.most(limitMicros + COST);
    // Each reservation is exactly the cost and a refusal reserves nothing: exactly `fits` succeed.
    expect(successes).to.equal(fits);
    expect(w.fakes.fast.requests).to.have.length(successes);
    expect(spent(await w.gw.explain(key), guardrailId)).to.equal(usd(successes * COST));
  });
});
