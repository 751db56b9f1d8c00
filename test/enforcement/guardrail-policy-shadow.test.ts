import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key, type Workspace } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { auditedOnce, shadowReport } from "../kit/shadow-polls.js";

const CARD = "pay with 4111 1111 1111 1111 today";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();
const EMAILS = { content_filter_builtins: [{ slug: "email", action: "flag" }] };
const CARDS_TOO = {
  content_filter_builtins: [
    { slug: "email", action: "flag" },
    { slug: "credit-card", action: "redact" },
  ],
};

describe("enforcement: a guardrail policy change in shadow beside the live policy", () => {
  const w = useWorld();
  const speak = (key: Key, input: string, model: string = MODELS.fast) =>
    w.gw.speak(key, { model, input });
  const path = (type: string, id: string) => `/api/v1/guardrails/policies/${type}/${id}/shadow`;
  const start = (type: string, id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(path(type, id), body);
  const policy = async (ws: Workspace, type: string, body: Record<string, unknown>) => {
    const res = await w.gw.admin.post(`/api/v1/guardrails/policies/${type}`, {
      name: `policy ${randomUUID().slice(0, 8)}`,
      policy_type: type,
      workspace_id: ws.id,
      ...body,
    });
    expect(res.status, shown(res)).to.equal(201);
    return res.body.data.id as string;
  };
  const report = (type: string, id: string, count: number) =>
    shadowReport(w.gw.admin, path(type, id), count);
  const audited = (id: string, action: string) => auditedOnce(w.gw.admin, id, action);

  it("records a redaction a moderation shadow would make, leaves the answer alone, and promotes it", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const id = await policy(ws, "moderation", {
      name: "Emails",
      config: EMAILS,
      api_key_hashes: [key.hash],
    });
    const started = await start("moderation", id, {
      change: { name: "Emails and cards", config: CARDS_TOO },
      expires_at: inDays(7),
    });
    expect(started.status, shown(started)).to.equal(201);
    expect(started.body.data).to.include({ expired: false, outcomes_changed: 0 });
    expect(started.body.data.change).to.deep.equal({ name: "Emails and cards", config: CARDS_TOO });
    // The live policy is as it was.
    const detail = (await w.gw.admin.get(`/api/v1/guardrails/policies/moderation/${id}`)).body.data;
    expect(detail).to.deep.include({ name: "Emails", config: EMAILS });
    // The policy says a shadow runs (its report is at .../shadow).
    expect(detail.shadow).to.deep.equal({
      started_at: started.body.data.started_at,
      expires_at: started.body.data.expires_at,
    });
    const carded = await speak(key, CARD);
    expectAudio(carded);
    const plain = await speak(key, "nothing to hide here");
    expectAudio(plain);
    const record = await w.gw.generation(key, carded);
    // Live: no filter acted (the card was spoken as sent); the shadow would have redacted it.
    expect(record.guardrail_outcomes).to.deep.equal([]);
    expect(record.shadow_outcome).to.include({
      guardrail_id: id,
      policy_id: id,
      live: "allowed",
      shadow: "redacted",
    });
    expect((await w.gw.generation(key, plain)).shadow_outcome).to.equal(null);
    const data = await report("moderation", id, 1);
    expect(data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 1 }]);
    expect(data.affected_generation_ids).to.deep.equal([carded.headers.get("x-generation-id")]);
    // A second shadow is refused while this one runs.
    expectError(
      await start("moderation", id, {
        change: { name: "x", config: EMAILS },
        expires_at: inDays(1),
      }),
      409,
      /already runs a shadow/,
    );
    const promoted = await w.gw.admin.post(`${path("moderation", id)}/promote`);
    expect(promoted.status, shown(promoted)).to.equal(200);
    expect(promoted.body.data).to.deep.include({ name: "Emails and cards", config: CARDS_TOO });
    // Promoted, the redaction is live.
    const after = await speak(key, CARD);
    expectAudio(after);
    const live = await w.gw.generation(key, after);
    expect(live.guardrail_outcomes.map((o: { action: string }) => o.action)).to.deep.equal([
      "redact",
    ]);
    expect(live.shadow_outcome).to.equal(null);
    expectError(await w.gw.admin.get(path("moderation", id)), 404, /runs no shadow/);
    const ended = (await w.gw.admin.get(`/api/v1/guardrails/policies/moderation/${id}`)).body.data;
    expect(ended.shadow).to.equal(null);
    expect((await audited(id, "guardrail_policy.shadow_start")).changes).to.have.property("shadow");
    const update = await audited(id, "guardrail_policy.update");
    expect(update.changes).to.have.property("shadow");
    expect(update.changes).to.have.property("config");
  });

  it("records a model a model availability shadow would refuse; ends by DELETE; an expired shadow decides nothing", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const id = await policy(ws, "model_availability", {
      config: { allowed_models: [MODELS.fast, MODELS.openai] },
      is_workspace_default: true,
    });
    const only = { name: "OpenAI only", config: { allowed_models: [MODELS.openai] } };
    expect(
      (await start("model_availability", id, { change: only, expires_at: inDays(1) })).status,
    ).to.equal(201);
    const res = await speak(key, "hello there");
    expectAudio(res);
    const record = await w.gw.generation(key, res);
    expect(record.shadow_outcome).to.include({ policy_id: id, live: "allowed", shadow: "refused" });
    expect(record.shadow_outcome.reason).to.match(/allowed_models/);
    const ended = await w.gw.admin.delete(path("model_availability", id));
    expect(ended.status, shown(ended)).to.equal(200);
    expect(ended.body).to.deep.equal({ deleted: true });
    expect((await audited(id, "guardrail_policy.shadow_end")).changes.shadow.after).to.equal(null);
    expectError(await w.gw.admin.delete(path("model_availability", id)), 404, /runs no shadow/);
    expectError(
      await w.gw.admin.post(`${path("model_availability", id)}/promote`),
      404,
      /runs no shadow/,
    );
    const next = await speak(key, "hello again");
    expectAudio(next);
    expect((await w.gw.generation(key, next)).shadow_outcome).to.equal(null);

    // A shadow that expires: reported as expired, ignored by requests, replaceable.
    const soon = new Date(Date.now() + 1500).toISOString();
    expect(
      (await start("model_availability", id, { change: only, expires_at: soon })).status,
    ).to.equal(201);
    await new Promise((r) => setTimeout(r, 1600));
    const late = await speak(key, "hello once more");
    expectAudio(late);
    expect((await w.gw.generation(key, late)).shadow_outcome).to.equal(null);
    const expired = await w.gw.admin.get(path("model_availability", id));
    expect(expired.status, shown(expired)).to.equal(200);
    expect(expired.body.data.expired).to.equal(true);
    expect(
      (await start("model_availability", id, { change: only, expires_at: inDays(1) })).status,
    ).to.equal(201);
  });

  it("reports what a budget policy's shadow would refuse, replayed from the records: an early refusal leaves room", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const config = (limit: number) => ({
      limit_usd: limit,
      reset_interval: "daily",
      include_byok_in_budgets: false,
    });
    const id = await policy(ws, "budget", { config: config(1), api_key_hashes: [key.hash] });
    const started = await start("budget", id, {
      change: { name: "Tight", config: config(0.0002) },
      expires_at: inDays(1),
    });
    expect(started.status, shown(started)).to.equal(201);
    // $0.00024, then $0.00012 twice: under $0.0002 a day the first is refused, which leaves
    // room for the second, not for the third.
    const first = await speak(key, "Twenty-four characters!!");
    expectAudio(first);
    expectAudio(await speak(key, "Budget test."));
    const third = await speak(key, "Budget test.");
    expectAudio(third);
    const res = await pollUntil(
      () => w.gw.admin.get(path("budget", id)),
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
  });

  it("promotes as a PUT: the policy's checks refuse a failing change with 409 unless forced", async () => {
    const ws = await w.gw.workspace();
    const checks = [
      {
        name: "cards are spoken",
        request: { model: MODELS.fast, input: CARD },
        expect: "allowed",
      },
    ];
    const id = await policy(ws, "moderation", { name: "Emails", config: EMAILS, checks });
    const started = await start("moderation", id, {
      change: { name: "Emails and cards", config: CARDS_TOO },
      expires_at: inDays(1),
    });
    expect(started.status, shown(started)).to.equal(201);
    const refused = await w.gw.admin.post(`${path("moderation", id)}/promote`);
    expect(refused.status, shown(refused)).to.equal(409);
    expect(refused.body.error.metadata.failing_checks.join(" ")).to.match(
      /^cards are spoken: expected allowed, got redacted/,
    );
    // Nothing changed: the shadow still runs, the policy is as it was.
    expect((await w.gw.admin.get(path("moderation", id))).status).to.equal(200);
    const forced = await w.gw.admin.post(`${path("moderation", id)}/promote`, { force: true });
    expect(forced.status, shown(forced)).to.equal(200);
    expect(forced.body.data).to.deep.include({ name: "Emails and cards", config: CARDS_TOO });
    expectError(await w.gw.admin.get(path("moderation", id)), 404, /runs no shadow/);
  });

  it("answers 404 for an unknown policy or one that runs no shadow, and 400 naming the field", async () => {
    const ws = await w.gw.workspace();
    const id = await policy(ws, "budget", {
      config: { limit_usd: 1, reset_interval: "daily", include_byok_in_budgets: false },
    });
    const change = {
      name: "x",
      config: { limit_usd: 2, reset_interval: "daily", include_byok_in_budgets: false },
    };
    const ok = { change, expires_at: inDays(1) };
    expectError(await start("budget", UNKNOWN, ok), 404, /not found/);
    expectError(
      await start("moderation", id, { ...ok, change: { name: "x", config: EMAILS } }),
      404,
      /not found/,
    );
    expectError(await w.gw.admin.get(path("budget", UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.delete(path("budget", UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.post(`${path("budget", UNKNOWN)}/promote`), 404, /not found/);
    expectError(await w.gw.admin.get(path("budget", id)), 404, /runs no shadow/);
    // An invalid change gets the PUT's own message.
    const bad = { name: "x", config: { limit_usd: -1, reset_interval: "daily" } };
    const put = await w.gw.admin.request("PUT", `/api/v1/guardrails/policies/budget/${id}`, bad);
    expect(put.status).to.equal(400);
    const refused = await start("budget", id, { change: bad, expires_at: inDays(1) });
    expectError(refused, 400);
    expect(refused.body.error.message).to.equal(put.body.error.message);
    expectError(await start("budget", id, { expires_at: inDays(1) }), 400, /^change is required/);
    expectError(await start("budget", id, { change }), 400, /^expires_at is required/);
    expectError(
      await start("budget", id, { change, expires_at: "tomorrow" }),
      400,
      /^expires_at must be an ISO 8601 date-time/,
    );
    expectError(
      await start("budget", id, { change, expires_at: inDays(-1) }),
      400,
      /^expires_at must be in the future/,
    );
    expectError(
      await start("budget", id, { change, expires_at: inDays(31) }),
      400,
      /^expires_at must be at most 30 days ahead/,
    );
    expectError(await start("budget", id, { ...ok, window: 3 }), 400, /window/);
    expect((await start("budget", id, ok)).status).to.equal(201);
    expectError(
      await w.gw.admin.post(`${path("budget", id)}/promote`, { force: "yes" }),
      400,
      /force/,
    );
    // Nothing was promoted by the refused call.
    expect((await w.gw.admin.get(path("budget", id))).status).to.equal(200);
  });
});
