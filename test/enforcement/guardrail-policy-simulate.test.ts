import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key, type Workspace } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import type { JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";

/** At the test catalog's $10 per million characters: 24 characters cost $0.00024, 12 $0.00012. */
const LONG = "Twenty-four characters!!";
const SHORT = "Budget test.";
const UNKNOWN = "00000000-0000-4000-8000-000000000000";
const budgetConfig = (limit: number) => ({
  limit_usd: limit,
  reset_interval: "daily",
  include_byok_in_budgets: false,
});

describe("enforcement: a what-if replay of a guardrail policy change over recorded traffic", () => {
  const w = useWorld();
  const speak = (key: Key, input: string) => w.gw.speak(key, { model: MODELS.fast, input });
  const path = (type: string, id: string) => `/api/v1/guardrails/policies/${type}/${id}`;
  const simulate = (type: string, id: string, body: unknown): Promise<JsonResponse> =>
    w.gw.admin.post(`${path(type, id)}/simulate`, body);
  /** Simulates until the request log holds `count` records of the policy (written off the hot path). */
  const simulated = async (type: string, id: string, body: unknown, count: number) => {
    const res = await pollUntil(
      () => simulate(type, id, body),
      (r) => r.status !== 200 || r.body.data.requests_replayed >= count,
    );
    expect(res.status, shown(res)).to.equal(200);
    expect(res.body.data.requests_replayed).to.equal(count);
    return res.body.data;
  };
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

  it("replays a budget policy exactly: a request the new limit refuses early leaves room for a later one", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const id = await policy(ws, "budget", {
      name: "Roomy",
      config: budgetConfig(1),
      api_key_hashes: [key.hash],
    });
    // A workspace-wide budget over the same requests: held as recorded, and said so.
    const account = await w.gw.admin.post("/api/v1/guardrails/policies/account", {
      name: "Account cap",
      policy_type: "budget",
      config: budgetConfig(5),
      workspace_ids: [ws.id],
    });
    expect(account.status, shown(account)).to.equal(201);
    const first = await speak(key, LONG);
    expectAudio(first);
    const second = await speak(key, SHORT);
    expectAudio(second);
    const third = await speak(key, SHORT);
    expectAudio(third);
    // $0.0002 a day: the long request alone exceeds it; refused, it leaves room for the second
    // (a replay that kept the recorded spend would refuse the second too), not for the third.
    const change = { name: "Tight", config: budgetConfig(0.0002) };
    const data = await simulated("budget", id, { change }, 3);
    expect(data.outcomes_changed).to.equal(2);
    expect(data.newly_refused).to.deep.equal([{ reason: "budget", count: 2 }]);
    expect(data.newly_allowed).to.equal(0);
    const ids = [first, third].map((r) => r.headers.get("x-generation-id"));
    expect(data.affected_generation_ids).to.deep.equal(ids);
    expect(data.spend).to.have.length(1);
    expect(data.spend[0]).to.include({ entity: "key", subject: key.hash });
    expect(data.spend[0].recorded_usd).to.be.closeTo(0.00048, 1e-12);
    expect(data.spend[0].replayed_usd).to.be.closeTo(0.00012, 1e-12);
    expect(data.not_replayed).to.have.length(1);
    expect(data.not_replayed[0].field).to.equal(`account_policies[${account.body.data.id}]`);
    expect(data.not_replayed[0].reason).to.match(/"Account cap".*held as recorded/);
    // A change of who the policy governs is said not to be replayed.
    const moved = await simulated(
      "budget",
      id,
      { change: { ...change, api_key_hashes: [], member_ids: ["someone"] } },
      3,
    );
    expect(moved.not_replayed.map((u: { field: string }) => u.field)).to.include.members([
      "api_key_hashes",
      "member_ids",
    ]);
    // Nothing was written.
    const after = await w.gw.admin.get(path("budget", id));
    expect(after.body.data).to.deep.include({ name: "Roomy", config: budgetConfig(1) });
    expect(
      (await w.gw.admin.delete(`/api/v1/guardrails/policies/account/${account.body.data.id}`))
        .status,
    ).to.equal(200);
  });

  it("a model availability change newly refuses; a moderation change is named not replayed", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws, { member_user_id: "dana" });
    const models = await policy(ws, "model_availability", {
      config: { allowed_models: [MODELS.fast, MODELS.openai] },
      is_workspace_default: true,
    });
    const moderation = await policy(ws, "moderation", {
      config: { content_filter_builtins: [{ slug: "email", action: "flag" }] },
      member_ids: ["dana"],
    });
    expectAudio(await speak(key, SHORT));
    expectAudio(await speak(key, SHORT));
    const narrowed = await simulated(
      "model_availability",
      models,
      { change: { name: "OpenAI only", config: { allowed_models: [MODELS.openai] } } },
      2,
    );
    expect(narrowed.newly_refused).to.deep.equal([{ reason: "model", count: 2 }]);
    expect(narrowed.not_replayed).to.deep.equal([]);
    const filtered = await simulated(
      "moderation",
      moderation,
      {
        change: {
          name: "Cards too",
          config: { content_filter_builtins: [{ slug: "credit-card", action: "redact" }] },
        },
      },
      2,
    );
    expect(filtered.outcomes_changed).to.equal(0);
    expect(filtered.not_replayed.map((u: { field: string }) => u.field)).to.deep.equal([
      "config.content_filter_builtins",
    ]);
  });

  it("answers 404 for an unknown policy and 400 for a bad change or window", async () => {
    const ws = await w.gw.workspace();
    const id = await policy(ws, "budget", { config: budgetConfig(1) });
    const ok = { change: { name: "x", config: budgetConfig(2) } };
    expectError(await simulate("budget", UNKNOWN, ok), 404, /not found/);
    // A policy of another type is not found under this one.
    expectError(
      await simulate("moderation", id, {
        change: { name: "x", config: { content_filter_builtins: [] } },
      }),
      404,
      /not found/,
    );
    // The same message a PUT with the same body gets.
    const bad = { name: "x", config: { limit_usd: -1, reset_interval: "daily" } };
    const put = await w.gw.admin.request("PUT", path("budget", id), bad);
    expect(put.status).to.equal(400);
    const res = await simulate("budget", id, { change: bad });
    expectError(res, 400);
    expect(res.body.error.message).to.equal(put.body.error.message);
    // A mapped policy (a guardrail's budget, its workspace writing no policy) is its guardrail's.
    const other = await w.gw.workspace();
    const g = await w.gw.guardrail(other, { limit_usd: 1, reset_interval: "daily" });
    expect((await w.gw.admin.get(path("budget", g))).body.data.is_legacy_mapped).to.equal(true);
    expectError(
      await simulate("budget", g, { change: { name: "x", config: budgetConfig(2) } }),
      400,
      /is the view of guardrail .*\/api\/v1\/guardrails\/.*\/simulate/,
    );
    expectError(await simulate("budget", id, {}), 400, /^change is required/);
    expectError(
      await simulate("budget", id, { change: { name: "x" } }),
      400,
      /^config is required/,
    );
    expectError(await simulate("budget", id, { ...ok, window: 3 }), 400, /window/);
    expectError(
      await simulate("budget", id, { ...ok, from: "yesterday" }),
      400,
      /^from must be an ISO 8601 date-time/,
    );
    expectError(
      await simulate("budget", id, { ...ok, from: "2000-01-01T00:00:00Z" }),
      400,
      /^from must be within the request log's retention of \d+ days/,
    );
  });
});
