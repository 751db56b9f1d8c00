import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { auditedOnce, shadowReport } from "../kit/shadow-polls.js";

const CARD = "pay with 4111 1111 1111 1111 today";
const OTHER_CARD = "pay with 5555 5555 5555 4444 today";
/** At the test catalog's $10 per million characters: 24 characters cost $0.00024, 12 $0.00012. */
const LONG = "Twenty-four characters!!";
const SHORT = "Budget test.";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString();

describe("enforcement: a guardrail change in shadow beside the live guardrail", () => {
  const w = useWorld();
  const speak = (key: Key, input: string, model: string = MODELS.fast) =>
    w.gw.speak(key, { model, input });
  const path = (id: string) => `/api/v1/guardrails/${id}/shadow`;
  const start = (id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(path(id), body);
  const redactCards = { content_filter_builtins: [{ slug: "credit-card", action: "redact" }] };
  const report = (id: string, count: number) => shadowReport(w.gw.admin, path(id), count);

  it("records a redaction the shadow would make, leaves the answer alone, and promotes it", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "No filter yet" });
    await w.gw.assignKeys(g, key);
    const started = await start(g, { change: redactCards, expires_at: inDays(7) });
    expect(started.status, shown(started)).to.equal(201);
    expect(started.body.data).to.include({ expired: false, outcomes_changed: 0 });
    expect(Object.keys(started.body.data.change)).to.deep.equal(["content_filter_builtins"]);
    expect(started.body.data.change.content_filter_builtins[0]).to.include({
      slug: "credit-card",
      action: "redact",
    });
    const carded = await speak(key, CARD);
    expectAudio(carded);
    const plain = await speak(key, "nothing to hide here");
    expectAudio(plain);
    const record = await w.gw.generation(key, carded);
    // Live: no filter acted; the shadow would have redacted the card.
    expect(record.guardrail_outcomes).to.deep.equal([]);
    expect(record.shadow_outcome).to.include({
      guardrail_id: g,
      live: "allowed",
      shadow: "redacted",
    });
    expect((await w.gw.generation(key, plain)).shadow_outcome).to.equal(null);
    const data = await report(g, 1);
    expect(data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 1 }]);
    expect(data.affected_generation_ids).to.deep.equal([carded.headers.get("x-generation-id")]);
    // A second shadow is refused while this one runs.
    expectError(
      await start(g, { change: { name: "x" }, expires_at: inDays(1) }),
      409,
      /already runs a shadow/,
    );
    const promoted = await w.gw.admin.post(`${path(g)}/promote`);
    expect(promoted.status, shown(promoted)).to.equal(200);
    expect(promoted.body.data.content_filter_builtins).to.have.length(1);
    expectError(await w.gw.admin.get(path(g)), 404, /runs no shadow/);
    for (const action of ["guardrail.shadow_start", "guardrail.update"]) {
      expect((await auditedOnce(w.gw.admin, g, action)).changes).to.have.property("shadow");
    }
    const versions = await pollUntil(
      () => w.gw.admin.get(`/api/v1/guardrails/${g}/versions`),
      (r) => r.status !== 200 || r.body.total_count >= 2,
    );
    expect(versions.body.data[0].changes).to.have.property("content_filter_builtins");
  });

  it("records a model the shadow would refuse; ends by DELETE; an expired shadow decides nothing", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "Any model" });
    await w.gw.assignKeys(g, key);
    const only = { allowed_models: [MODELS.openai] };
    expect((await start(g, { change: only, expires_at: inDays(1) })).status).to.equal(201);
    const res = await speak(key, "hello there");
    expectAudio(res);
    const record = await w.gw.generation(key, res);
    expect(record.shadow_outcome).to.include({ live: "allowed", shadow: "refused" });
    expect(record.shadow_outcome.reason).to.match(/allowed_models/);
    const ended = await w.gw.admin.delete(path(g));
    expect(ended.status, shown(ended)).to.equal(200);
    expectError(await w.gw.admin.delete(path(g)), 404, /runs no shadow/);
    expectError(await w.gw.admin.post(`${path(g)}/promote`), 404, /runs no shadow/);
    // The live guardrail is as it was.
    expect((await w.gw.admin.get(`/api/v1/guardrails/${g}`)).body.data.allowed_models).to.equal(
      null,
    );

    // A shadow that expires: reported as expired, ignored by requests, replaceable.
    const soon = new Date(Date.now() + 1500).toISOString();
    expect((await start(g, { change: only, expires_at: soon })).status).to.equal(201);
    await new Promise((r) => setTimeout(r, 1600));
    const after = await speak(key, "hello again");
    expectAudio(after);
    expect((await w.gw.generation(key, after)).shadow_outcome).to.equal(null);
    const expired = await w.gw.admin.get(path(g));
    expect(expired.status, shown(expired)).to.equal(200);
    expect(expired.body.data.expired).to.equal(true);
    expect((await start(g, { change: only, expires_at: inDays(1) })).status).to.equal(201);
  });

  it("follows the live guardrail: a PATCH during the shadow is decided under the new live guardrail with the change", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "Patched meanwhile" });
    await w.gw.assignKeys(g, key);
    expect((await start(g, { change: redactCards, expires_at: inDays(1) })).status).to.equal(201);
    const before = await speak(key, CARD);
    expectAudio(before);
    expect((await w.gw.generation(key, before)).shadow_outcome).to.include({
      live: "allowed",
      shadow: "redacted",
    });
    // The live guardrail now blocks the card's digits: the shadow keeps that block (a field its
    // change does not write) beside its redaction, so both refuse and nothing differs.
    const patched = await w.gw.admin.patch(`/api/v1/guardrails/${g}`, {
      content_filters: [{ pattern: "4111", action: "block" }],
    });
    expect(patched.status, shown(patched)).to.equal(200);
    expect((await speak(key, CARD)).status).to.equal(403);
    const other = await speak(key, OTHER_CARD);
    expectAudio(other);
    expect((await w.gw.generation(key, other)).shadow_outcome).to.include({
      live: "allowed",
      shadow: "redacted",
    });
    // A shadow frozen at its start would have counted the blocked card as refused > redacted.
    const data = await report(g, 2);
    expect(data.changes).to.deep.equal([{ live: "allowed", shadow: "redacted", count: 2 }]);
    expect(data.affected_generation_ids).to.deep.equal(
      [other, before].map((r) => r.headers.get("x-generation-id")),
    );
    const narrowed = await w.gw.admin.patch(`/api/v1/guardrails/${g}`, {
      content_filters: null,
      allowed_models: [MODELS.openai],
    });
    expect(narrowed.status, shown(narrowed)).to.equal(200);
    // Promote applies the change to the guardrail as it is now: the model list stays.
    const promoted = await w.gw.admin.post(`${path(g)}/promote`);
    expect(promoted.status, shown(promoted)).to.equal(200);
    expect(promoted.body.data.allowed_models).to.deep.equal([MODELS.openai]);
    expect(promoted.body.data.content_filter_builtins).to.have.length(1);
  });

  it("replays a lowered budget at report time: an early refusal leaves room for a later request", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "No budget yet" });
    await w.gw.assignKeys(g, key);
    const lowered = { limit_usd: 0.0002, reset_interval: "daily" };
    expect((await start(g, { change: lowered, expires_at: inDays(1) })).status).to.equal(201);
    const first = await speak(key, LONG);
    expectAudio(first);
    const second = await speak(key, SHORT);
    expectAudio(second);
    const third = await speak(key, SHORT);
    expectAudio(third);
    // A budget is not decided per request: no record carries a shadow outcome for it.
    expect((await w.gw.generation(key, first)).shadow_outcome).to.equal(null);
    // $0.0002 a day: the long request alone exceeds it; refused, it leaves room for the second
    // (a replay that kept the recorded spend would refuse the second too), not for the third.
    const res = await pollUntil(
      () => w.gw.admin.get(path(g)),
      (r) => r.status !== 200 || r.body.data.budget.outcomes_changed >= 2,
    );
    expect(res.status, shown(res)).to.equal(200);
    const data = res.body.data;
    expect(data.outcomes_changed).to.equal(0);
    expect(data.budget).to.deep.equal({
      outcomes_changed: 2,
      changes: [{ live: "allowed", shadow: "refused", count: 2 }],
      affected_generation_ids: [first, third].map((r) => r.headers.get("x-generation-id")),
    });
  });

  it("reports what the live budget refused that a raised shadow budget allows", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { limit_usd: 0.0003, reset_interval: "daily" });
    await w.gw.assignKeys(g, key);
    expect((await start(g, { change: { limit_usd: 1 }, expires_at: inDays(1) })).status).to.equal(
      201,
    );
    expectAudio(await speak(key, SHORT));
    expectAudio(await speak(key, SHORT));
    const refused = await speak(key, SHORT);
    expectError(refused, 403, /exhausted/);
    const res = await pollUntil(
      () => w.gw.admin.get(path(g)),
      (r) => r.status !== 200 || r.body.data.budget.outcomes_changed >= 1,
    );
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.data.budget.changes).to.deep.equal([
      { live: "refused", shadow: "allowed", count: 1 },
    ]);
    expect(res.body.data.budget.affected_generation_ids).to.have.length(1);
  });

  it("counts the window's spend from before the shadow started: an unrelated change finds no budget difference", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { limit_usd: 0.0003, reset_interval: "daily" });
    await w.gw.assignKeys(g, key);
    const early = [await speak(key, SHORT), await speak(key, SHORT)];
    for (const r of early) expectAudio(r);
    // Both recorded before the shadow starts: its replay must see them in the window's spend.
    for (const r of early) await w.gw.generation(key, r);
    await pollUntil(
      () => w.gw.admin.post(`/api/v1/guardrails/${g}/simulate`, { change: { name: "x" } }),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 2,
    );
    const renamed = { name: "Renamed in shadow" };
    expect((await start(g, { change: renamed, expires_at: inDays(1) })).status).to.equal(201);
    expectError(await speak(key, SHORT), 403, /exhausted/);
    // The refusal is recorded once the replay of the shadow's budget counts three requests.
    const res = await pollUntil(
      () => w.gw.admin.post(`/api/v1/guardrails/${g}/simulate`, { change: renamed }),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= 3,
    );
    expect(res.body.data.requests_replayed).to.equal(3);
    const report = await w.gw.admin.get(path(g));
    expect(report.status, shown(report)).to.equal(200);
    // Replayed from the shadow's start with empty counters, the third request would fit.
    expect(report.body.data.budget).to.deep.equal({
      outcomes_changed: 0,
      changes: [],
      affected_generation_ids: [],
    });
  });

  it("answers 404 for an unknown guardrail and 400 naming the field for a bad body", async () => {
    const ws = await w.gw.workspace();
    const g = await w.gw.guardrail(ws, { name: "Bad input" });
    const ok = { change: { name: "x" }, expires_at: inDays(1) };
    expectError(await start(UNKNOWN, ok), 404, /not found/);
    expectError(await w.gw.admin.get(path(UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.delete(path(UNKNOWN)), 404, /not found/);
    expectError(await w.gw.admin.post(`${path(UNKNOWN)}/promote`), 404, /not found/);
    expectError(await w.gw.admin.get(path(g)), 404, /runs no shadow/);
    // An invalid change gets the PATCH's own message.
    const patched = await w.gw.admin.patch(`/api/v1/guardrails/${g}`, { limit_usd: -1 });
    expect(patched.status).to.equal(400);
    const bad = await start(g, { change: { limit_usd: -1 }, expires_at: inDays(1) });
    expectError(bad, 400);
    expect(bad.body.error.message).to.equal(patched.body.error.message);
    expectError(await start(g, { expires_at: inDays(1) }), 400, /^change is required/);
    expectError(await start(g, { change: {}, expires_at: inDays(1) }), 400, /one field to change/);
    expectError(await start(g, { change: { name: "x" } }), 400, /^expires_at is required/);
    expectError(
      await start(g, { change: { name: "x" }, expires_at: "tomorrow" }),
      400,
      /^expires_at must be an ISO 8601 date-time/,
    );
    expectError(
      await start(g, { change: { name: "x" }, expires_at: inDays(-1) }),
      400,
      /^expires_at must be in the future/,
    );
    expectError(
      await start(g, { change: { name: "x" }, expires_at: inDays(31) }),
      400,
      /^expires_at must be at most 30 days ahead/,
    );
    expectError(await start(g, { ...ok, window: 3 }), 400, /window/);
    expectError(await w.gw.admin.post(`${path(g)}/promote`, { force: "yes" }), 400, /force/);
  });
});
