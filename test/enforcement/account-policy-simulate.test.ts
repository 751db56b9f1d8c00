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
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const ACCOUNT = "/api/v1/guardrails/policies/account";
const budgetConfig = (limit: number) => ({
  limit_usd: limit,
  reset_interval: "daily",
  include_byok_in_budgets: false,
});

describe("enforcement: a what-if replay of a workspace-wide policy change across the workspaces it covers", () => {
  const w = useWorld();
  const speak = (key: Key, input: string) => w.gw.speak(key, { model: MODELS.fast, input });
  const simulate = (id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(`${ACCOUNT}/${id}/simulate`, body);
  /** Simulates until the request log holds `count` records of the policy (written off the hot path). */
  const simulated = async (id: string, body: unknown, count: number) => {
    const res = await pollUntil(
      () => simulate(id, body),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= count,
    );
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.data.requests_replayed).to.equal(count);
    return res.body.data;
  };
  const accountPolicy = async (body: Record<string, unknown>) => {
    const res = await w.gw.admin.post(ACCOUNT, body);
    expect(res.status, shown(res)).to.equal(201);
    return res.body.data.id as string;
  };

  it("replays a budget per workspace as enforcement counts it: an early refusal frees room for a later request", async () => {
    const a = await w.gw.workspace();
    const b = await w.gw.workspace();
    const outside = await w.gw.workspace();
    // One member with a key in each covered workspace, and a key in a workspace not covered.
    const inA = await w.gw.key(a, { member_user_id: "mia" });
    const inB = await w.gw.key(b, { member_user_id: "mia" });
    const notCovered = await w.gw.key(outside, { member_user_id: "mia" });
    const id = await accountPolicy({
      name: "Roomy cap",
      policy_type: "budget",
      config: budgetConfig(1),
      workspace_ids: [a.id, b.id],
    });
    // Workspace b's own budget counts the same requests: it is held as recorded, and said so.
    const own = await w.gw.admin.post("/api/v1/guardrails/policies/budget", {
      name: "B's own",
      policy_type: "budget",
      workspace_id: b.id,
      config: budgetConfig(5),
      is_workspace_default: true,
    });
    expect(own.status, shown(own)).to.equal(201);
    const first = await speak(inA, LONG);
    expectAudio(first);
    expectAudio(await speak(inA, SHORT));
    const third = await speak(inA, SHORT);
    expectAudio(third);
    expectAudio(await speak(inB, SHORT));
    expectAudio(await speak(notCovered, LONG));
    // $0.0002 a day. In workspace a the long request alone exceeds it; refused, it leaves room
    // for the second (a replay that kept the recorded spend would refuse it too), not the third.
    // Mia's request in workspace b is counted against workspace b's counters only, as admission
    // counts it, so it stays admitted although mia spent in a first.
    const change = { name: "Tight cap", config: budgetConfig(0.0002) };
    const data = await simulated(id, { change }, 4);
    expect(data.outcomes_changed).to.equal(2);
    expect(data.newly_refused).to.deep.equal([{ reason: "budget", count: 2 }]);
    expect(data.newly_allowed).to.equal(0);
    const ids = [first, third].map((r) => r.headers.get("x-generation-id"));
    expect(data.affected_generation_ids).to.have.members(ids);
    expect(data.affected_generation_ids).to.have.length(2);
    // Key b's spend does not move; mia's adds up what moves in each workspace.
    const moved = Object.fromEntries(
      data.spend.map((s: { entity: string; subject: string; recorded_usd: number }) => [
        `${s.entity}:${s.subject}`,
        s,
      ]),
    );
    expect(Object.keys(moved)).to.have.members([`key:${inA.hash}`, "member:mia"]);
    expect(moved[`key:${inA.hash}`].recorded_usd).to.be.closeTo(0.00048, 1e-12);
    expect(moved[`key:${inA.hash}`].replayed_usd).to.be.closeTo(0.00012, 1e-12);
    expect(moved["member:mia"].recorded_usd).to.be.closeTo(0.0006, 1e-12);
    expect(moved["member:mia"].replayed_usd).to.be.closeTo(0.00024, 1e-12);
    expect(data.not_replayed).to.have.length(1);
    expect(data.not_replayed[0].field).to.equal(`workspace_policies[${own.body.data.id}]`);
    expect(data.not_replayed[0].reason).to.match(
      new RegExp(`"B's own" of workspace ${b.id} .*held as recorded`),
    );
    // A change of coverage is named, not replayed.
    const widened = await simulated(
      id,
      { change: { ...change, is_default: true, workspace_ids: [a.id] } },
      4,
    );
    expect(widened.not_replayed.map((u: { field: string }) => u.field)).to.have.members([
      "is_default",
      "workspace_ids",
      `workspace_policies[${own.body.data.id}]`,
    ]);
    // A window before the traffic replays nothing.
    const earlier = await simulate(id, {
      change,
      from: new Date(Date.now() - 3_600_000).toISOString(),
      to: new Date(Date.now() - 1_800_000).toISOString(),
    });
    expect(earlier.status, shown(earlier)).to.equal(200);
    expect(earlier.body.data.requests_replayed).to.equal(0);
    // Nothing was written.
    const list = await w.gw.admin.get(`${ACCOUNT}?policy_type=budget`);
    const stored = list.body.data.find((p: { id: string }) => p.id === id);
    expect(stored).to.deep.include({ name: "Roomy cap", config: budgetConfig(1) });
    expect((await w.gw.admin.delete(`${ACCOUNT}/${id}`)).status).to.equal(200);
  });

  it("a model availability change newly refuses in each covered workspace", async () => {
    const a = await w.gw.workspace();
    const b = await w.gw.workspace();
    const id = await accountPolicy({
      name: "Models",
      policy_type: "model_availability",
      config: { allowed_models: [MODELS.fast, MODELS.openai] },
      workspace_ids: [a.id, b.id],
    });
    expectAudio(await speak(await w.gw.key(a), SHORT));
    expectAudio(await speak(await w.gw.key(b), SHORT));
    const narrowed = await simulated(
      id,
      { change: { name: "OpenAI only", config: { allowed_models: [MODELS.openai] } } },
      2,
    );
    expect(narrowed.newly_refused).to.deep.equal([{ reason: "model", count: 2 }]);
    expect(narrowed.outcomes_changed).to.equal(2);
    expect((await w.gw.admin.delete(`${ACCOUNT}/${id}`)).status).to.equal(200);
  });

  it("answers 404 for an unknown policy and 400 for a bad change or window, as its PUT words them", async () => {
    const ws = await w.gw.workspace();
    const id = await accountPolicy({
      name: "Cap",
      policy_type: "budget",
      config: budgetConfig(1),
      workspace_ids: [ws.id],
    });
    const ok = { change: { name: "x", config: budgetConfig(2) } };
    expectError(await simulate(UNKNOWN, ok), 404, /not found/);
    expectError(await simulate("not-a-uuid", ok), 404, /not found/);
    // The same message a PUT with the same body gets.
    for (const bad of [
      { name: "x", config: { limit_usd: -1, reset_interval: "daily" } },
      { name: "x", config: budgetConfig(2), workspace_ids: [UNKNOWN] },
      { name: "x", config: budgetConfig(2), policy_type: "moderation" },
      { name: " ", config: budgetConfig(2) },
    ]) {
      const put = await w.gw.admin.request("PUT", `${ACCOUNT}/${id}`, bad);
      expect(put.status, shown(put)).to.equal(400);
      const res = await simulate(id, { change: bad });
      expectError(res, 400);
      expect(res.body.error.message).to.equal(put.body.error.message);
    }
    expectError(await simulate(id, {}), 400, /^change is required/);
    expectError(await simulate(id, { change: { name: "x" } }), 400, /^config is required/);
    expectError(await simulate(id, { ...ok, window: 3 }), 400, /window/);
    expectError(
      await simulate(id, { ...ok, from: "yesterday" }),
      400,
      /^from must be an ISO 8601 date-time/,
    );
    expectError(
      await simulate(id, { ...ok, from: "2000-01-01T00:00:00Z" }),
      400,
      /^from must be within the request log's retention of \d+ days/,
    );
    const now = new Date().toISOString();
    expectError(await simulate(id, { ...ok, from: now, to: now }), 400, /^from must be before to/);
    expect((await w.gw.admin.delete(`${ACCOUNT}/${id}`)).status).to.equal(200);
  });
});
