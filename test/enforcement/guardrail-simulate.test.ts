import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";

/** At the test catalog's $10 per million characters: 24 characters cost $0.00024, 12 $0.00012. */
const LONG = "Twenty-four characters!!";
const SHORT = "Budget test.";

describe("enforcement: a what-if replay of a guardrail change over recorded traffic", () => {
  const w = useWorld();
  const speak = (key: Key, input: string) => w.gw.speak(key, { model: MODELS.fast, input });
  const simulate = (id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(`/api/v1/guardrails/${id}/simulate`, body);
  /** Simulates until the request log holds `count` records of the guardrail (it is written off the hot path). */
  const simulated = async (id: string, body: unknown, count: number) => {
    const res = await pollUntil(
      () => simulate(id, body),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= count,
    );
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.data.requests_replayed).to.equal(count);
    return res.body.data;
  };

  it("replays a budget exactly: a request the new limit refuses early leaves room for a later one", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { name: "No budget yet" });
    await w.gw.assignKeys(g, key);
    const first = await speak(key, LONG);
    expectAudio(first);
    const second = await speak(key, SHORT);
    expectAudio(second);
    const third = await speak(key, SHORT);
    expectAudio(third);
    // $0.0002 a day: the long request alone exceeds it; refused, it leaves room for the second
    // (a replay that kept the recorded spend would refuse the second too), not for the third.
    const data = await simulated(g, { change: { limit_usd: 0.0002, reset_interval: "daily" } }, 3);
    expect(data.outcomes_changed).to.equal(2);
    expect(data.newly_refused).to.deep.equal([{ reason: "budget", count: 2 }]);
    expect(data.newly_allowed).to.equal(0);
    const ids = [first, third].map((r) => r.headers.get("x-generation-id"));
    expect(data.affected_generation_ids).to.deep.equal(ids);
    expect(data.spend).to.have.length(1);
    expect(data.spend[0]).to.include({ entity: "key", subject: key.hash });
    expect(data.spend[0].recorded_usd).to.be.closeTo(0.00048, 1e-12);
    expect(data.spend[0].replayed_usd).to.be.closeTo(0.00012, 1e-12);
    expect(data.not_replayed).to.deep.equal([]);
    // Nothing was written: the guardrail still has no budget.
    const after = await w.gw.admin.get(`/api/v1/guardrails/${g}`);
    expect(after.body.data.limit_usd).to.equal(null);
  });

  it("a raised limit newly allows what the recorded budget refused; a model rule newly refuses", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { member_user_id: "dana" });
    const g = await w.gw.guardrail(ws, { limit_usd: 0.0003, reset_interval: "daily" });
    await w.gw.assignKeys(g, key);
    expectAudio(await speak(key, SHORT));
    expectAudio(await speak(key, SHORT));
    expectError(await speak(key, SHORT), 403, /exhausted/);
    const raised = await simulated(g, { change: { limit_usd: 1 } }, 3);
    expect(raised.newly_allowed).to.equal(1);
    expect(raised.newly_refused).to.deep.equal([]);
    const moved = raised.spend.find((s: { entity: string }) => s.entity === "key");
    expect(moved.replayed_usd - moved.recorded_usd).to.be.closeTo(0.00012, 1e-12);
    const member = raised.spend.find((s: { entity: string }) => s.entity === "member");
    expect(member).to.include({ subject: "dana" });
    const narrowed = await simulated(g, { change: { allowed_models: [MODELS.openai] } }, 3);
    expect(narrowed.newly_refused).to.deep.equal([{ reason: "model", count: 2 }]);
    const filtered = await simulated(
      g,
      { change: { content_filters: [{ pattern: "secret", action: "redact" }] } },
      3,
    );
    expect(filtered.outcomes_changed).to.equal(0);
    expect(filtered.not_replayed.map((u: { field: string }) => u.field)).to.deep.equal([
      "content_filters",
    ]);
  });

  it("answers 404 for an unknown guardrail and 400 for a bad change or window", async () => {
    const ws = await w.gw.workspace();
    const g = await w.gw.guardrail(ws, { name: "Bad input" });
    expectError(
      await simulate("00000000-0000-4000-8000-000000000000", { change: { name: "x" } }),
      404,
      /not found/,
    );
    // The same message a PATCH with the same body gets.
    const patched = await w.gw.admin.patch(`/api/v1/guardrails/${g}`, { limit_usd: -1 });
    expect(patched.status).to.equal(400);
    const res = await simulate(g, { change: { limit_usd: -1 } });
    expectError(res, 400);
    expect(res.body.error.message).to.equal(patched.body.error.message);
    expectError(await simulate(g, {}), 400, /^change is required/);
    expectError(await simulate(g, { change: {} }), 400, /one field to change/);
    expectError(await simulate(g, { change: { name: "x" }, window: 3 }), 400, /window/);
    expectError(
      await simulate(g, { change: { name: "x" }, from: "yesterday" }),
      400,
      /^from must be an ISO 8601 date-time/,
    );
    expectError(
      await simulate(g, { change: { name: "x" }, from: "2000-01-01T00:00:00Z" }),
      400,
      /^from must be within the request log's retention of \d+ days/,
    );
    expectError(
      await simulate(g, {
        change: { name: "x" },
        from: new Date(Date.now() - 1000).toISOString(),
        to: new Date(Date.now() - 2000).toISOString(),
      }),
      400,
      /^from must be before to/,
    );
  });
});
