import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";

/**
 * 12 characters at the test catalog's $10 per million characters: $0.00012 a
 * request. A limit_usd of 0.0003 fits two requests ($0.00024); a third would
 * reach $0.00036.
 */
const TEXT = "Budget test.";
const LIMIT = 0.0003;

/** OpenRouter: "Guardrail budgets are per-entity, not shared" (one limit_usd per key and per member). */
describe("enforcement: guardrail budgets are per key and per member", () => {
  const w = useWorld();
  const speak = (key: Key) => w.gw.speak(key, { model: MODELS.fast, input: TEXT });
  const twice = async (key: Key) => {
    expectAudio(await speak(key));
    expectAudio(await speak(key));
  };
  // biome-ignore lint/suspicious/noExplicitAny: explain JSON
  const budgetsOf = async (key: Key): Promise<any[]> => (await w.gw.explain(key)).budgets;

  it("a guardrail assigned to two keys gives each key its own limit_usd", async () => {
    const ws = await w.gw.workspace();
    const a = await w.gw.key(ws);
    const b = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, {
      name: "Per key",
      limit_usd: LIMIT,
      reset_interval: "daily",
    });
    await w.gw.assignKeys(g, a, b);
    await twice(a);
    expectError(await speak(a), 403, /^Budget of guardrail "Per key" .*exhausted for this API key/);
    // The pooled counter refused b here: a's spend is not b's.
    await twice(b);
    expectError(await speak(b), 403, /exhausted for this API key/);
    expect(w.fakes.fast.requests).to.have.length(4);
    const [budget] = await budgetsOf(b);
    expect(budget).to.deep.include({
      guardrail_id: g,
      scope: "api_key",
      subject: b.hash,
      limit_usd: 0.0003,
      spent_usd: 0.00024,
    });
    expect(budget.remaining_usd).to.be.closeTo(0.00006, 1e-12);
  });

  it("a member guardrail counts all of one member's keys together, and each member has their own", async () => {
    const ws = await w.gw.workspace();
    const audrey1 = await w.gw.key(ws, { member_user_id: "audrey" });
    const audrey2 = await w.gw.key(ws, { member_user_id: "audrey" });
    const bob = await w.gw.key(ws, { member_user_id: "bob" });
    const g = await w.gw.guardrail(ws, {
      name: "Per member",
      limit_usd: LIMIT,
      reset_interval: "daily",
    });
    await w.gw.assignMembers(g, "audrey", "bob");
    expectAudio(await speak(audrey1));
    expectAudio(await speak(audrey2));
    expectError(await speak(audrey1), 403, /exhausted for member "audrey"/);
    expectError(await speak(audrey2), 403, /exhausted for member "audrey"/);
    await twice(bob);
    const budgets = await budgetsOf(audrey2);
    expect(budgets).to.have.length(1);
    expect(budgets[0]).to.deep.include({ scope: "member", subject: "audrey", spent_usd: 0.00024 });
  });

  it("a key budget and a member budget layer: the key caps itself, the member caps their keys' total", async () => {
    // OpenRouter's example, scaled: a member limit above the key's (0.0005 fits four requests).
    const ws = await w.gw.workspace();
    const capped = await w.gw.key(ws, { member_user_id: "audrey" });
    const other = await w.gw.key(ws, { member_user_id: "audrey" });
    const member = await w.gw.guardrail(ws, {
      name: "Audrey",
      limit_usd: 0.0005,
      reset_interval: "daily",
    });
    await w.gw.assignMembers(member, "audrey");
    const key = await w.gw.guardrail(ws, {
      name: "Key",
      limit_usd: LIMIT,
      reset_interval: "daily",
    });
    await w.gw.assignKeys(key, capped);
    await twice(capped);
    expectError(await speak(capped), 403, /^Budget of guardrail "Key" .*for this API key/);
    // Audrey has 0.00024 of 0.0005: two more requests on her other key, then the member total refuses.
    await twice(other);
    expectError(await speak(other), 403, /^Budget of guardrail "Audrey" .*for member "audrey"/);
  });

  it("the workspace default budget is the maximum per key and per member, each spending its own", async () => {
    const ws = await w.gw.workspace();
    await w.gw.setDefault(ws, { limit_usd: LIMIT, reset_interval: "daily" });
    const lone1 = await w.gw.key(ws);
    const lone2 = await w.gw.key(ws);
    const carol1 = await w.gw.key(ws, { member_user_id: "carol" });
    const carol2 = await w.gw.key(ws, { member_user_id: "carol" });
    // A bigger member guardrail does not lift the default's maximum.
    const big = await w.gw.guardrail(ws, { name: "Big", limit_usd: 1, reset_interval: "daily" });
    await w.gw.assignMembers(big, "carol");
    await twice(lone1);
    expectError(await speak(lone1), 403, /Default" .*exhausted for this API key/);
    await twice(lone2);
    expectAudio(await speak(carol1));
    expectAudio(await speak(carol2));
    expectError(await speak(carol2), 403, /Default" .*exhausted for member "carol"/);
    const budgets = await budgetsOf(carol2);
    expect(budgets.map((b) => [b.guardrail_id, b.scope, b.subject, b.spent_usd])).to.deep.equal([
      [ws.defaultGuardrailId, "workspace_default_member", "carol", 0.00024],
      [ws.defaultGuardrailId, "workspace_default_key", carol2.hash, 0.00012],
      [big, "member", "carol", 0.00024],
    ]);
  });

  it("200 concurrent requests over two keys of one guardrail: each key gets exactly its own limit", async function () {
    this.timeout(120_000);
    const ws = await w.gw.workspace();
    const a = await w.gw.key(ws);
    const b = await w.gw.key(ws);
    // 20 requests of $0.00012 fit in 0.00246; the 21st would not.
    const g = await w.gw.guardrail(ws, { limit_usd: 0.00246, reset_interval: "daily" });
    await w.gw.assignKeys(g, a, b);
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => speak(i % 2 ? a : b)));
    const ok = (key: Key) =>
      results.filter((r, i) => (i % 2 ? a : b) === key && r.status === 200).length;
    expect(results.filter((r) => r.status !== 200 && r.status !== 403)).to.deep.equal([]);
    expect([ok(a), ok(b)]).to.deep.equal([20, 20]);
    expect(w.fakes.fast.requests).to.have.length(40);
    expect((await budgetsOf(a))[0].spent_usd).to.equal(0.0024);
    expect((await budgetsOf(b))[0].spent_usd).to.equal(0.0024);
  });

  it("200 concurrent requests over four keys of one member share the member's limit exactly", async function () {
    this.timeout(120_000);
    const ws = await w.gw.workspace();
    const keys = await Promise.all(
      [1, 2, 3, 4].map(() => w.gw.key(ws, { member_user_id: "dana" })),
    );
    const g = await w.gw.guardrail(ws, { limit_usd: 0.00246, reset_interval: "daily" });
    await w.gw.assignMembers(g, "dana");
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => speak(keys[i % 4] as Key)),
    );
    expect(results.filter((r) => r.status !== 200 && r.status !== 403)).to.deep.equal([]);
    expect(results.filter((r) => r.status === 200)).to.have.length(20);
    expect(w.fakes.fast.requests).to.have.length(20);
    expect((await budgetsOf(keys[0] as Key))[0].spent_usd).to.equal(0.0024);
  });
});

describe("enforcement: changing reset_interval keeps what the new window already spent", () => {
  const w = useWorld();
  const speak = (key: Key) => w.gw.speak(key, { model: MODELS.fast, input: TEXT });

  it("daily -> weekly: today's spend counts toward this week", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      name: "Switching",
      limit_usd: LIMIT,
      reset_interval: "daily",
    });
    expectAudio(await speak(key));
    expectAudio(await speak(key));
    expectError(await speak(key), 403, /per day/);
    await w.gw.patchGuardrail(guardrailId, { reset_interval: "weekly" });
    // The week began on Monday and holds today's 0.00024 already: the third request is still refused.
    expectError(
      await speak(key),
      403,
      /^Budget of guardrail "Switching" .*\$0\.00024 of \$0\.0003 per week/,
    );
    const [budget] = (await w.gw.explain(key)).budgets;
    expect(budget).to.deep.include({ reset_interval: "weekly", spent_usd: 0.00024 });
    expect(budget.window).to.match(/^weekly:\d{4}-\d{2}-\d{2}$/);
    // Raising the limit to 0.0005 makes room for exactly two more (0.00048).
    await w.gw.patchGuardrail(guardrailId, { limit_usd: 0.0005 });
    expectAudio(await speak(key));
    expectAudio(await speak(key));
    expectError(await speak(key), 403, /per week/);
  });

  it("weekly -> monthly and back to daily: each window sums the days it covers", async () => {
    const { key, guardrailId } = await w.gw.governedKey({
      limit_usd: LIMIT,
      reset_interval: "weekly",
    });
    expectAudio(await speak(key));
    expectAudio(await speak(key));
    await w.gw.patchGuardrail(guardrailId, { reset_interval: "monthly" });
    expectError(await speak(key), 403, /per month/);
    await w.gw.patchGuardrail(guardrailId, { reset_interval: "daily" });
    expectError(await speak(key), 403, /per day/);
    expect((await w.gw.explain(key)).budgets[0].spent_usd).to.equal(0.00024);
  });
});
