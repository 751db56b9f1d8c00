import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { MODELS } from "../kit/enforcement-catalog.js";
import { expectAudio, type Key, type Workspace } from "../kit/enforcement-gateway.js";
import { useWorld } from "../kit/enforcement-world.js";
import { expectError, shown } from "../kit/expect.js";
import { Api } from "../kit/http.js";

/** $0.00012 a request at the test catalog's price; 0.0003 fits two requests, not three. */
const TEXT = "Budget test.";
const LIMIT = 0.0003;
const NONE = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };

/** Guardrail policies govern requests like guardrails: each adds restrictions, budgets per entity. */
describe("enforcement: guardrail policies", () => {
  const w = useWorld();
  const speak = (key: Key, model: string = MODELS.fast) => w.gw.speak(key, { model, input: TEXT });
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
  const assign = async (
    ws: Workspace,
    path: string,
    policyId: string,
    type: string,
    expected: typeof NONE | Record<string, unknown>,
  ) => {
    const res = await w.gw.admin.request("PUT", `/api/v1/guardrails/policies/assignments/${path}`, {
      assigned: true,
      expected_assignment: expected,
      policy_id: policyId,
      policy_type: type,
      workspace_id: ws.id,
    });
    expect(res.status, shown(res)).to.equal(200);
  };

  it("a budget policy assigned to a member gives each member their own limit", async () => {
    const ws = await w.gw.workspace();
    const ann1 = await w.gw.key(ws, { member_user_id: "ann" });
    const ann2 = await w.gw.key(ws, { member_user_id: "ann" });
    const bo = await w.gw.key(ws, { member_user_id: "bo" });
    const budget = await policy(ws, "budget", {
      name: "Member budget",
      config: { limit_usd: LIMIT, reset_interval: "daily", include_byok_in_budgets: false },
      member_ids: ["ann", "bo"],
    });
    expectAudio(await speak(ann1));
    expectAudio(await speak(ann2));
    expectError(
      await speak(ann1),
      403,
      /^Budget of policy "Member budget".*exhausted for member "ann"/,
    );
    // Bo's spend is his own.
    expectAudio(await speak(bo));
    expectAudio(await speak(bo));
    expectError(await speak(bo), 403, new RegExp(`${budget}.*exhausted for member "bo"`));
    // Explain names the policy that decided, by id, as the budget of the member.
    const explained = await w.gw.explain(ann2);
    expect(explained.budgets).to.have.length(1);
    expect(explained.budgets[0]).to.deep.include({
      guardrail_id: budget,
      policy_id: budget,
      guardrail_name: "Member budget",
      scope: "member",
      subject: "ann",
    });
  });

  it("a guardrail budget keeps governing its key once the workspace manages budgets through policies", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const tight = await w.gw.guardrail(ws, { limit_usd: LIMIT, reset_interval: "daily" });
    await w.gw.assignKeys(tight, key);
    expectAudio(await speak(key));
    // The first budget policy of the workspace moves the type there: the guardrail's budget
    // becomes a policy of the workspace with the same id, and the spend so far still counts.
    await policy(ws, "budget", {
      name: "Generous",
      config: { limit_usd: 100, reset_interval: "daily", include_byok_in_budgets: false },
    });
    const replaced = await w.gw.admin.get(`/api/v1/guardrails/policies/budget/${tight}`);
    expect(replaced.body.data).to.deep.include({ is_legacy_mapped: false, reference: null });
    expectAudio(await speak(key));
    expectError(await speak(key), 403, new RegExp(`${tight}.*exhausted for this API key`));
    // Raising it through the policies API is what governs now.
    const raised = await w.gw.admin.request("PUT", `/api/v1/guardrails/policies/budget/${tight}`, {
      name: "Raised",
      policy_type: "budget",
      config: { limit_usd: 100, reset_interval: "daily", include_byok_in_budgets: false },
    });
    expect(raised.status, shown(raised)).to.equal(200);
    expectAudio(await speak(key));
    // The guardrail's own budget can no longer change: it would never be enforced.
    const patched = await w.gw.admin.patch(`/api/v1/guardrails/${tight}`, { limit_usd: 1 });
    expectError(patched, 400, /^limit_usd cannot change here: budget settings of workspace/);
  });

  it("editing a mapped model availability policy moves the type: the guardrail's list no longer governs", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const g = await w.gw.guardrail(ws, { allowed_models: [MODELS.openai] });
    await w.gw.assignKeys(g, key);
    expectError(await speak(key, MODELS.fast), 403, /not allowed|allowed_models/);
    const edited = await w.gw.admin.request(
      "PUT",
      `/api/v1/guardrails/policies/model_availability/${g}`,
      {
        name: "Both models",
        policy_type: "model_availability",
        config: { allowed_models: [MODELS.openai, MODELS.fast] },
      },
    );
    expect(edited.status, shown(edited)).to.equal(200);
    expectAudio(await speak(key, MODELS.fast));
    const explained = await w.gw.explain(key);
    // Explain names the policy, its type and the guardrail it replaced; the guardrail still
    // governs with what it has left (no model list).
    const [guardrail, policy] = explained.guardrails;
    expect(guardrail).to.deep.include({
      id: g,
      policy_type: null,
      replaced_legacy_guardrail_ids: [],
    });
    expect(guardrail.contributes.join()).to.not.include("allowed_models");
    expect(policy).to.deep.include({
      source: "key",
      id: g,
      name: "Both models",
      policy_type: "model_availability",
      replaced_legacy_guardrail_ids: [g],
    });
    expect(policy.contributes).to.include(`allowed_models: ${MODELS.openai}, ${MODELS.fast}`);
  });

  it("the workspace default budget policy governs every key but those with their own policy of the type", async () => {
    const ws = await w.gw.workspace();
    const plain = await w.gw.key(ws);
    const own = await w.gw.key(ws);
    const cap = await policy(ws, "budget", {
      name: "Workspace cap",
      config: { limit_usd: LIMIT, reset_interval: "daily", include_byok_in_budgets: false },
      is_workspace_default: true,
    });
    const generous = await policy(ws, "budget", {
      config: { limit_usd: 100, reset_interval: "daily", include_byok_in_budgets: false },
    });
    await assign(ws, `api-keys/${own.hash}`, generous, "budget", {
      ...NONE,
      workspace_default_policy_ids: [cap],
    });
    for (const key of [plain, own]) {
      expectAudio(await speak(key));
      expectAudio(await speak(key));
    }
    expectError(await speak(plain), 403, /"Workspace cap".*exhausted for this API key/);
    // OpenRouter lists such a key among the default's overridden_api_key_hashes.
    expectAudio(await speak(own));
  });

  it("a workspace-wide budget cannot be raised by a key's own budget policy", async () => {
    const ws = await w.gw.workspace();
    const other = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const free = await w.gw.key(other);
    // Named workspaces only: this world is shared, and a default would cover every suite's.
    const cap = await w.gw.admin.post("/api/v1/guardrails/policies/account", {
      name: "Per-person cap",
      policy_type: "budget",
      config: { limit_usd: LIMIT, reset_interval: "daily", include_byok_in_budgets: false },
      workspace_ids: [ws.id],
    });
    expect(cap.status, shown(cap)).to.equal(201);
    try {
      const own = await policy(ws, "budget", {
        config: { limit_usd: 100, reset_interval: "daily", include_byok_in_budgets: false },
        is_workspace_default: true,
      });
      const generous = await policy(ws, "budget", {
        config: { limit_usd: 100, reset_interval: "daily", include_byok_in_budgets: false },
      });
      await assign(ws, `api-keys/${key.hash}`, generous, "budget", {
        ...NONE,
        workspace_default_policy_ids: [own],
      });
      for (const k of [key, free]) {
        expectAudio(await speak(k));
        expectAudio(await speak(k));
      }
      expectError(
        await speak(key),
        403,
        /^Budget of policy "Per-person cap".*exhausted for this API key/,
      );
      // A workspace it does not cover is not capped.
      expectAudio(await speak(free));
    } finally {
      await w.gw.admin.delete(`/api/v1/guardrails/policies/account/${cap.body.data.id}`);
    }
  });

  it("a workspace default moderation policy blocks for every key of the workspace", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await policy(ws, "moderation", {
      config: { content_filter_builtins: [{ slug: "email", action: "block" }] },
      is_workspace_default: true,
    });
    const res = await w.gw.speak(key, {
      model: MODELS.fast,
      input: "Write to jane.doe@example.com.",
    });
    expectError(res, 403, /^Request blocked by content filter: Email address$/);
    expect(w.fakes.fast.requests).to.have.length(0);
    expectAudio(await speak(key));
  });

  it("a model availability policy restricts the models a key may use, and unassigning lifts it", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    const models = await policy(ws, "model_availability", {
      config: { allowed_models: [MODELS.openai] },
      api_key_hashes: [key.hash],
    });
    expectError(await speak(key, MODELS.fast), 403, /not allowed|allowed_models/);
    const res = await w.gw.admin.request(
      "PUT",
      `/api/v1/guardrails/policies/assignments/api-keys/${key.hash}`,
      {
        assigned: false,
        expected_assignment: { ...NONE, policy_ids: [models] },
        policy_id: models,
        policy_type: "model_availability",
        workspace_id: ws.id,
      },
    );
    expect(res.body).to.deep.equal({ data: true });
    expectAudio(await speak(key, MODELS.fast));
  });

  it("GET /key shows the regions of the key's effective policy, a region policy's included", async () => {
    const ws = await w.gw.workspace();
    const key = await w.gw.key(ws);
    await policy(ws, "model_availability", {
      config: { allowed_data_regions: ["europe"] },
      api_key_hashes: [key.hash],
    });
    const me = await new Api(w.gw.url("europe"), key.secret).get("/api/v1/key");
    expect(me.status, shown(me)).to.equal(200);
    expect(me.body.data.allowed_data_regions).to.deep.equal(["europe"]);
  });
});
