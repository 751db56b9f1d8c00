import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { auditedOnce, shadowReport } from "../kit/shadow-polls.js";

const CARD = "pay with 4111 1111 1111 1111 today";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const ACCOUNT = "/api/v1/guardrails/policies/account";
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const EMAILS = { content_filter_builtins: [{ slug: "email", action: "flag" }] };
const CARDS_TOO = {
  content_filter_builtins: [
    { slug: "email", action: "flag" },
    { slug: "credit-card", action: "redact" },
  ],
};
/** At the test catalog's $10 per million characters: 24 characters cost $0.00024, 12 $0.00012. */
const LONG = "Twenty-four characters!!";
const SHORT = "Budget test.";
const budgetConfig = (limit: number) => ({
  limit_usd: limit,
  reset_interval: "daily",
  include_byok_in_budgets: false,
});

describe("enforcement: a workspace-wide policy change in shadow across the workspaces it covers", () => {
  const w = useWorld();
  const speak = (key: Key, input: string, model: string = MODELS.fast) =>
    w.gw.speak(key, { model, input });
  const path = (id: string) => `${ACCOUNT}/${id}/shadow`;
  const start = (id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(path(id), body);
  const accountPolicy = async (body: Record<string, unknown>) => {
    const res = await w.gw.admin.post(ACCOUNT, body);
    expect(res.status, shown(res)).to.equal(201);
    return res.body.data.id as string;
  };
  const listed = async (id: string) => {
    const res = await w.gw.admin.get(`${ACCOUNT}?limit=100`);
    expect(res.status, shown(res)).to.equal(200);
    return res.body.data.find((p: { id: string }) => p.id === id);
  };
  const report = (id: string, count: number) => shadowReport(w.gw.admin, path(id), count);
  const audited = (id: string, action: string) => auditedOnce(w.gw.admin, id, action);

  it("records in each covered workspace the redaction a moderation shadow would make, adds the reports up, and promotes it", async () => {
    const a = await w.gw.workspace();
    const b = await w.gw.workspace();
    const outside = await w.gw.workspace();
    const inA = await w.gw.key(a);
    const inB = await w.gw.key(b);
    const notCovered = await w.gw.key(outside);
    const id = await accountPolicy({
      name: "Emails",
      policy_type: "moderation",
      config: EMAILS,
      workspace_ids: [a.id, b.id],
    });
    const started = await start(id, {
      change: { name: "Emails and cards", config: CARDS_TOO },
      expires_at: inDays(7),
    });
    expect(started.status, shown(started)).to.equal(201);
    expect(started.body.data).to.include({ expired: false, outcomes_changed: 0 });
    expect(started.body.data.change).to.deep.equal({ name: "Emails and cards", config: CARDS_TOO });
    expect([...started.body.data.workspace_ids].sort()).to.deep.equal([a.id, b.id].sort());
    // The live policy is as it was, and says a shadow runs.
    const live = await listed(id);
    expect(live).to.deep.include({ name: "Emails", config: EMAILS });
    expect(live.shadow).to.deep.equal({
      started_at: started.body.data.started_at,
      expires_at: started.body.data.expires_at,
    });
    // A shadow is no version: the policy's history is still its create.
    const versions = await w.gw.admin.get(`${ACCOUNT}/${id}/versions`);
    expect(versions.status, shown(versions)).to.equal(200);
    expect(versions.body.data.map((v: { version: number }) => v.version)).to.deep.equal([1]);
    const first = await w.gw.admin.get(`${ACCOUNT}/${id}/versions/1`);
    expect(first.status, shown(first)).to.equal(200);
    expect(first.body.data.policy.shadow).to.equal(null);

    const cardA = await speak(inA, CARD);
    expectAudio(cardA);
    const cardB = await speak(inB, CARD);
    expectAudio(cardB);
    const plain = await speak(inA, "nothing to hide here");
    expectAudio(plain);
    const elsewhere = await speak(notCovered, CARD);
    expectAudio(elsewhere);
    for (const [key, res] of [
      [inA, cardA],
      [inB, cardB],
    ] as const) {
      const record = await w.gw.generation(key, res);
      // Live: no filter acted; the shadow would have redacted the card.
      expect(record.guardrail_outcomes).to.deep.equal([]);
      expect(record.shadow_outcome).to.include({
        guardrail_id: id,
        policy_id: id,
        live: "allowed",
        shadow: "redacted",
      });
    }
    expect((await w.gw.generation(inA, plain)).shadow_outcome).to.equal(null);
    expect((await w.gw.generation(notCovered, elsewhere)).shadow_outcome).to.equal(null);
    const data = await report(id, 2);
    expect(data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 2 }]);
    expect([...data.affected_generation_ids].sort()).to.deep.equal(
      [cardA, cardB].map((r) => r.headers.get("x-generation-id")).sort(),
    );
    expect([...data.workspace_ids].sort()).to.deep.equal([a.id, b.id].sort());
    // A second shadow is refused while this one runs.
    expectError(
      await start(id, { change: { name: "x", config: EMAILS }, expires_at: inDays(1) }),
      409,
      /account policy .* already runs a shadow/,
    );
    const promoted = await w.gw.admin.post(`${path(id)}/promote`);
    expect(promoted.status, shown(promoted)).to.equal(200);
    expect(promoted.body.data).to.deep.include({
      name: "Emails and cards",
      config: CARDS_TOO,
      shadow: null,
    });
    // Promoted, the redaction is live in both workspaces.
    for (const key of [inA, inB]) {
      const after = await speak(key, CARD);
      expectAudio(after);
      const record = await w.gw.generation(key, after);
      expect(record.guardrail_outcomes.map((o: { action: string }) => o.action)).to.deep.equal([
        "redact",
      ]);
      expect(record.shadow_outcome).to.equal(null);
    }
    expectError(await w.gw.admin.get(path(id)), 404, /account policy .* runs no shadow/);
    expect((await audited(id, "guardrail_policy.shadow_start")).changes).to.have.property("shadow");
    const update = await audited(id, "guardrail_policy.update");
    expect(update.changes).to.have.property("shadow");
    expect(update.changes).to.have.property("config");
    const history = await w.gw.admin.get(`${ACCOUNT}/${id}/versions`);
    expect(history.body.data.map((v: { version: number }) => v.version)).to.deep.equal([2, 1]);
  });

  it("replays a budget shadow per workspace from the records: an early refusal leaves room, and no workspace uses up another's", async () => {
    const a = await w.gw.workspace();
    const b = await w.gw.workspace();
    // One member with a key in each covered workspace.
    const inA = await w.gw.key(a, { member_user_id: "noor" });
    const inB = await w.gw.key(b, { member_user_id: "noor" });
    const id = await accountPolicy({
      name: "Roomy cap",
      policy_type: "budget",
      config: budgetConfig(1),
      workspace_ids: [a.id, b.id],
    });
    const started = await start(id, {
      change: { name: "Tight cap", config: budgetConfig(0.0002) },
      expires_at: inDays(1),
    });
    expect(started.status, shown(started)).to.equal(201);
    // $0.00024, then $0.00012 twice in a: under $0.0002 a day the first is refused, which leaves
    // room for the second, not for the third. The request in b is counted against b's counters.
    const first = await speak(inA, LONG);
    expectAudio(first);
    expectAudio(await speak(inA, SHORT));
    const third = await speak(inA, SHORT);
    expectAudio(third);
    expectAudio(await speak(inB, SHORT));
    const res = await pollUntil(
      () => w.gw.admin.get(path(id)),
      (r) => r.status !== 200 || r.body.data.budget.outcomes_changed >= 2,
    );
    expect(res.status, shown(res)).to.equal(200);
    // No record carries a shadow outcome (a budget is not decided per request).
    expect(res.body.data.outcomes_changed).to.equal(0);
    expect(res.body.data.budget.changes).to.deep.equal([
      { live: "allowed", shadow: "refused", count: 2 },
    ]);
    expect([...res.body.data.budget.affected_generation_ids].sort()).to.deep.equal(
      [first, third].map((r) => r.headers.get("x-generation-id")).sort(),
    );
    expect([...res.body.data.workspace_ids].sort()).to.deep.equal([a.id, b.id].sort());
    expect(res.body.data.expired).to.equal(false);
  });

  it("records a model a model availability shadow would refuse; ends by DELETE; an expired shadow decides nothing", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const id = await accountPolicy({
      name: "Two models",
      policy_type: "model_availability",
      config: { allowed_models: [MODELS.fast, MODELS.openai] },
      workspace_ids: [ws.id],
    });
    const only = { name: "OpenAI only", config: { allowed_models: [MODELS.openai] } };
    expect((await start(id, { change: only, expires_at: inDays(1) })).status).to.equal(201);
    const res = await speak(key, "hello there");
    expectAudio(res);
    const record = await w.gw.generation(key, res);
    expect(record.shadow_outcome).to.include({ policy_id: id, live: "allowed", shadow: "refused" });
    expect(record.shadow_outcome.reason).to.match(/allowed_models/);
    const ended = await w.gw.admin.delete(path(id));
    expect(ended.status, shown(ended)).to.equal(200);
    expect(ended.body).to.deep.equal({ deleted: true });
    expect((await audited(id, "guardrail_policy.shadow_end")).changes.shadow.after).to.equal(null);
    expectError(await w.gw.admin.delete(path(id)), 404, /runs no shadow/);
    expectError(await w.gw.admin.post(`${path(id)}/promote`), 404, /runs no shadow/);
    const next = await speak(key, "hello again");
    expectAudio(next);
    expect((await w.gw.generation(key, next)).shadow_outcome).to.equal(null);

    // A shadow that expires: reported as expired, ignored by requests, replaceable.
    const soon = new Date(Date.now() + 1500).toISOString();
    expect((await start(id, { change: only, expires_at: soon })).status).to.equal(201);
    await new Promise((r) => setTimeout(r, 1600));
    const late = await speak(key, "hello once more");
    expectAudio(late);
    expect((await w.gw.generation(key, late)).shadow_outcome).to.equal(null);
    const expired = await w.gw.admin.get(path(id));
    expect(expired.status, shown(expired)).to.equal(200);
    expect(expired.body.data.expired).to.equal(true);
    expect((await start(id, { change: only, expires_at: inDays(1) })).status).to.equal(201);
  });

  it("promotes as a PUT: the policy's checks refuse a failing change with 409 unless forced", async () => {
    const ws = await w.gw.workspace();
    const checks = [
      { name: "cards are spoken", request: { model: MODELS.fast, input: CARD }, expect: "allowed" },
    ];
    const id = await accountPolicy({
      name: "Emails",
      policy_type: "moderation",
      config: EMAILS,
      workspace_ids: [ws.id],
      checks,
    });
    const started = await start(id, {
      change: { name: "Emails and cards", config: CARDS_TOO },
      expires_at: inDays(1),
    });
    expect(started.status, shown(started)).to.equal(201);
    const refused = await w.gw.admin.post(`${path(id)}/promote`);
    expect(refused.status, shown(refused)).to.equal(409);
    expect(refused.body.error.metadata.failing_checks.join(" ")).to.match(
      /^cards are spoken: expected allowed, got redacted/,
    );
    // Nothing changed: the shadow still runs, the policy is as it was.
    expect((await w.gw.admin.get(path(id))).status).to.equal(200);
    expect(await listed(id)).to.deep.include({ name: "Emails", config: EMAILS });
    const forced = await w.gw.admin.post(`${path(id)}/promote`, { force: true });
    expect(forced.status, shown(forced)).to.equal(200);
    expect(forced.body.data).to.deep.include({ name: "Emails and cards", config: CARDS_TOO });
    expectError(await w.gw.admin.get(path(id)), 404, /runs no shadow/);
  });

  it("answers 404 for an unknown policy or one that runs no shadow, and 400 naming the field", async () => {
    const ws = await w.gw.workspace();
    const id = await accountPolicy({
      name: "Cap",
      policy_type: "budget",
      config: budgetConfig(1),
      workspace_ids: [ws.id],
    });
    const change = { name: "x", config: budgetConfig(2) };
    const ok = { change, expires_at: inDays(1) };
    expectError(await start(UNKNOWN, ok), 404, /not found/);
    expectError(await w.gw.admin.get(path(UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.delete(path(UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.post(`${path(UNKNOWN)}/promote`), 404, /not found/);
    expectError(await w.gw.admin.get(path(id)), 404, /runs no shadow/);
    // An invalid change gets the PUT's own message.
    const bad = { name: "x", config: { limit_usd: -1, reset_interval: "daily" } };
    const put = await w.gw.admin.request("PUT", `${ACCOUNT}/${id}`, bad);
    expect(put.status).to.equal(400);
    const refused = await start(id, { change: bad, expires_at: inDays(1) });
    expectError(refused, 400);
    expect(refused.body.error.message).to.equal(put.body.error.message);
    expectError(
      await start(id, {
        change: { ...change, workspace_ids: [UNKNOWN] },
        expires_at: inDays(1),
      }),
      400,
      /^workspace_ids\[0\] .* is not a workspace/,
    );
    expectError(await start(id, { expires_at: inDays(1) }), 400, /^change is required/);
    expectError(await start(id, { change }), 400, /^expires_at is required/);
    expectError(
      await start(id, { change, expires_at: "tomorrow" }),
      400,
      /^expires_at must be an ISO 8601 date-time/,
    );
    expectError(
      await start(id, { change, expires_at: inDays(-1) }),
      400,
      /^expires_at must be in the future/,
    );
    expectError(
      await start(id, { change, expires_at: inDays(31) }),
      400,
      /^expires_at must be at most 30 days ahead/,
    );
    expectError(await start(id, { ...ok, window: 3 }), 400, /window/);
    expect((await start(id, ok)).status).to.equal(201);
    expectError(await w.gw.admin.post(`${path(id)}/promote`, { force: "yes" }), 400, /force/);
    // Nothing was promoted by the refused call.
    expect((await w.gw.admin.get(path(id))).status).to.equal(200);
    // Deleting the policy ends its shadow with it.
    expect((await w.gw.admin.delete(`${ACCOUNT}/${id}`)).status).to.equal(200);
    expectError(await w.gw.admin.get(path(id)), 404, /not found/);
  });
});
