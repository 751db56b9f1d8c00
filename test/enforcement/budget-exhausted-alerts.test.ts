import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "chai";
import { WEBHOOK_CACHE_MS } from "../../governance/alerts/detector.js";
import { MODELS, PRICE } from "../kit/enforcement-catalog.js";
import { expectAudio, type Workspace } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError } from "../kit/expect.js";
import { pollUntil } from "../kit/poll.js";
import { WebhookReceiver } from "../kit/webhook-receiver.js";

/** 100 characters at PRICE (10 per million): $0.001 a request. */
const TEXT =
  "Budget exhaust check, one hundred characters long, spoken through a fake upstream at a known price!";
const COST_USD = ([...TEXT].length * PRICE) / 1_000_000;
const SECRET = "whsec_budget_exhausted_0123456789abcdef";

/**
 * Budget alerts that settlements alone cannot give: a budget used up by a refusal (spend stays
 * under the limit, since the request that would cross it is refused first), and thresholds
 * crossed before a webhook existed.
 */
describe("budget alerts: a refused request exhausts its budget; a new webhook catches up", function () {
  this.timeout(60_000);
  const w = useWorld();
  const receiver = new WebhookReceiver();

  before(async () => {
    receiver.secret = SECRET;
    await receiver.start();
  });
  after(async () => {
    await receiver.close();
  });

  async function webhook(ws: Workspace, thresholds: number[]): Promise<string> {
    const res = await w.gw.admin.post("/api/v1/webhooks", {
      workspace_id: ws.id,
      url: receiver.url,
      secret: SECRET,
      thresholds_pct: thresholds,
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(201);
    return res.body.data.id;
  }

  /** The events of a webhook once every check is done and every delivery went out. */
  // biome-ignore lint/suspicious/noExplicitAny: event JSON
  async function events(hookId: string, atLeast: number): Promise<any[]> {
    await w.system.alertsIdle();
    const all = await pollUntil(
      () => w.gw.admin.get(`/api/v1/webhooks/${hookId}/deliveries?limit=100`),
      (r) =>
        r.body.data.length >= atLeast &&
        r.body.data.every((d: { status: string }) => d.status === "delivered"),
      200,
    );
    const ids = new Set(all.body.data.map((d: { event_id: string }) => d.event_id));
    return receiver.received.filter((r) => ids.has(r.event?.id)).map((r) => r.event);
  }

  const kinds = (list: { type: string; data: { threshold_pct: number | null } }[]) =>
    list.map((e) => `${e.type}:${e.data.threshold_pct ?? "-"}`).sort();

  it("the first refusal fires 100% and budget.exhausted, once, though spend stays under the limit", async () => {
    // $0.001 of $0.0015 spent (66.7%): 50% is reached, 80% is not, and the next request is refused.
    const { ws, key, guardrailId } = await w.gw.governedKey({
      limit_usd: COST_USD * 1.5,
      reset_interval: "daily",
    });
    const hook = await webhook(ws, [50, 80, 100]);
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    for (let i = 0; i < 3; i++)
      expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    const got = await events(hook, 3);
    expect(kinds(got)).to.deep.equal([
      "budget.exhausted:-",
      "budget.threshold:100",
      "budget.threshold:50",
    ]);
    const exhausted = got.find((e) => e.type === "budget.exhausted");
    expect(exhausted.data).to.deep.include({
      guardrail_id: guardrailId,
      key_hash: key.hash,
      scope: "api_key",
      limit_usd: COST_USD * 1.5,
    });
    expect(exhausted.data.spend_usd).to.be.closeTo(COST_USD, 1e-9);
    // A later refusal in the window adds nothing.
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    expect(await events(hook, 3)).to.have.length(3);
  });

  it("a webhook created mid-window fires for thresholds already crossed, once, without a new request", async () => {
    const { ws, key } = await w.gw.governedKey({
      limit_usd: COST_USD * 10,
      reset_interval: "monthly",
    });
    for (let i = 0; i < 6; i++)
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    const hook = await webhook(ws, [50, 80]);
    expect(kinds(await events(hook, 1))).to.deep.equal(["budget.threshold:50"]);
    // Once the speech service's webhook cache (which saw none) renews, settlements see it too.
    await sleep(WEBHOOK_CACHE_MS);
    for (let i = 0; i < 2; i++)
      expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expect(kinds(await events(hook, 2))).to.deep.equal([
      "budget.threshold:50",
      "budget.threshold:80",
    ]);
  });

  it("a webhook created after a budget refused a request gets budget.exhausted and 100%, once", async () => {
    const { ws, key, guardrailId } = await w.gw.governedKey({
      limit_usd: COST_USD * 1.5,
      reset_interval: "weekly",
    });
    expectAudio(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }));
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    // The refusal is in the request log before the webhook exists.
    await pollUntil(
      () =>
        w.gw.admin.get(`/api/v1/generations?key_hash=${key.hash}&refusal_reason=budget_exceeded`),
      (r) => r.status === 200 && r.body.data.length === 1,
      200,
    );
    const hook = await webhook(ws, [50, 100]);
    const got = await events(hook, 3);
    expect(kinds(got)).to.deep.equal([
      "budget.exhausted:-",
      "budget.threshold:100",
      "budget.threshold:50",
    ]);
    for (const e of got)
      expect(e.data).to.deep.include({ guardrail_id: guardrailId, key_hash: key.hash });
    // Another refusal in the window adds nothing: the catch-up used the refusals' own once keys.
    await sleep(WEBHOOK_CACHE_MS);
    expectError(await w.gw.speak(key, { model: MODELS.fast, input: TEXT }), 403, /Budget/);
    expect(await events(hook, 3)).to.have.length(3);
  });
});
