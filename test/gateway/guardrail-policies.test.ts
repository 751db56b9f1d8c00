import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createKey, createWorkspace, uniqueName, useSystem } from "../kit/gateway-harness.js";
import { pollUntil } from "../kit/poll.js";

/**
 * Request and response shapes of OpenRouter's Guardrail Policies reference
 * (CreateBudgetGuardrailPolicyRequest, BudgetGuardrailPolicyDetail / Summary,
 * GuardrailPolicyAssignmentState, ChangeGuardrailPolicyAssignmentRequest), over HTTP.
 */
const DETAIL_KEYS = [
  "api_key_hashes",
  "checks",
  "config",
  "id",
  "is_legacy_mapped",
  "is_workspace_default",
  "last_check_run",
  "legacy_guardrail_ids",
  "member_ids",
  "name",
  "opted_out_api_key_hashes",
  "opted_out_member_ids",
  "overridden_api_key_hashes",
  "overridden_member_ids",
  "policy_type",
  "reference",
  "shadow",
  "updated_at",
  "workspace_id",
];
const SUMMARY_KEYS = [
  "api_key_count",
  "config",
  "id",
  "is_legacy_mapped",
  "is_workspace_default",
  "legacy_guardrail_ids",
  "member_count",
  "name",
  "policy_type",
  "replaced_legacy_guardrail_ids",
  "updated_at",
  "workspace_id",
];
const BUDGET = { include_byok_in_budgets: false, limit_usd: 200, reset_interval: "monthly" };
/** The reference's own shapes and example values (test/fixtures/README.md). */
const REFERENCE = JSON.parse(
  readFileSync(
    new URL("../../../test/fixtures/openrouter-guardrail-policies.json", import.meta.url),
    "utf8",
  ),
);

/** The JSON type of a value, as a shape compares it (null is its own). */
function jsonType(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/** Every field of the reference's shape is in `answer`, of the same JSON type. */
function expectShape(answer: Record<string, unknown>, shape: Record<string, unknown>): void {
  for (const [field, example] of Object.entries(shape)) {
    expect(answer, field).to.have.property(field);
    // The example's reference is a mapped policy's; a policy of the workspace's own has null.
    if (field === "reference") continue;
    expect(jsonType(answer[field]), field).to.equal(jsonType(example));
  }
}

describe("gateway: guardrail policies", () => {
  const h = useSystem();
  const put = (path: string, body: unknown) => h.api.request("PUT", path, body);
  // biome-ignore lint/suspicious/noExplicitAny: a JSON body of any shape
  const createPolicy = async (type: string, body: Record<string, unknown>): Promise<any> => {
    const res = await h.api.post(`/api/v1/guardrails/policies/${type}`, {
      name: uniqueName(type),
      policy_type: type,
      ...body,
    });
    expectStatus(res, 201);
    return res.body.data;
  };
  const keyAssignment = (hash: string, ws: string, type = "budget") =>
    h.api.get(
      `/api/v1/guardrails/policies/assignments/api-keys/${hash}?workspace_id=${ws}&policy_type=${type}`,
    );
  const memberAssignment = (user: string, ws: string, type = "budget") =>
    h.api.get(
      `/api/v1/guardrails/policies/assignments/members/${user}?workspace_id=${ws}&policy_type=${type}`,
    );
  const none = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };

  describe("CRUD of each type", () => {
    it("answers in the reference's shapes, with its example request", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const example = REFERENCE.BudgetGuardrailPolicyDetail;
      const created = await createPolicy("budget", {
        name: example.name,
        config: example.config,
        workspace_id: ws.id,
        api_key_hashes: [key.data.hash],
        member_ids: example.member_ids,
      });
      expectShape(created, example);
      expect(created.config).to.deep.equal(example.config);
      expect(REFERENCE.BudgetGuardrailPolicyDetailReference).to.include("legacy_mapping");
      const listed = await h.api.get(`/api/v1/guardrails/policies/budget?workspace_id=${ws.id}`);
      expectShape(listed.body.data[0], REFERENCE.BudgetGuardrailPolicySummary);
      expect(listed.body.total_count).to.equal(1);
      const state = await keyAssignment(key.data.hash, ws.id);
      expectShape(state.body.data, REFERENCE.GuardrailPolicyAssignmentState);
    });

    it("creates, gets, lists and deletes a budget policy in OpenRouter's shapes", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const created = await createPolicy("budget", {
        name: "Engineering monthly budget",
        workspace_id: ws.id,
        config: BUDGET,
        api_key_hashes: [key.data.hash],
        member_ids: ["user_2abcDEFghiJKLmnoPQRstu"],
      });
      expect(Object.keys(created).sort()).to.deep.equal(DETAIL_KEYS);
      expect(created).to.deep.include({
        name: "Engineering monthly budget",
        policy_type: "budget",
        config: BUDGET,
        workspace_id: ws.id,
        api_key_hashes: [key.data.hash],
        member_ids: ["user_2abcDEFghiJKLmnoPQRstu"],
        is_workspace_default: false,
        is_legacy_mapped: false,
        reference: null,
      });

      const got = await h.api.get(`/api/v1/guardrails/policies/budget/${created.id}`);
      expectStatus(got, 200);
      expect(got.body.data).to.deep.equal(created);

      const list = await h.api.get(`/api/v1/guardrails/policies/budget?workspace_id=${ws.id}`);
      expectStatus(list, 200);
      expect(list.body.total_count).to.equal(1);
      expect(Object.keys(list.body.data[0]).sort()).to.deep.equal(SUMMARY_KEYS);
      expect(list.body.data[0]).to.deep.include({
        id: created.id,
        api_key_count: 1,
        member_count: 1,
      });
      // Another type's list does not hold it, nor does its path find it.
      const other = await h.api.get(`/api/v1/guardrails/policies/moderation?workspace_id=${ws.id}`);
      expect(other.body).to.deep.equal({ data: [], total_count: 0 });
      expectError(await h.api.get(`/api/v1/guardrails/policies/moderation/${created.id}`), 404);

      const del = await h.api.delete(`/api/v1/guardrails/policies/budget/${created.id}`);
      expectStatus(del, 200);
      expect(del.body).to.deep.equal({ deleted: true });
      expectError(
        await h.api.get(`/api/v1/guardrails/policies/budget/${created.id}`),
        404,
        /not found/,
      );
      expectError(await h.api.delete(`/api/v1/guardrails/policies/budget/${created.id}`), 404);
    });

    it("creates model availability and moderation policies with the guardrail's setting names", async () => {
      const ws = await createWorkspace(h.api);
      const models = await createPolicy("model_availability", {
        workspace_id: ws.id,
        config: {
          allowed_models: ["openai/gpt-4o", "anthropic/claude-sonnet-4"],
          allowed_providers: ["openai", "anthropic"],
          enforce_zdr_anthropic: true,
          enforce_zdr_openai: true,
          allowed_data_regions: ["europe"],
        },
      });
      expect(models.config.allowed_providers).to.deep.equal(["openai", "anthropic"]);
      const moderation = await createPolicy("moderation", {
        workspace_id: ws.id,
        config: {
          content_filter_builtins: [{ action: "block", slug: "email" }],
          content_filters: [{ pattern: "secret\\d+", action: "redact", label: "[SECRET]" }],
        },
      });
      expect(moderation.config.content_filter_builtins).to.deep.equal([
        { action: "block", slug: "email" },
      ]);
    });

    it("update replaces name and config, keeps omitted assignment lists, and replaces sent ones", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const p = await createPolicy("budget", {
        workspace_id: ws.id,
        config: BUDGET,
        api_key_hashes: [key.data.hash],
        member_ids: ["u1"],
      });
      const path = `/api/v1/guardrails/policies/budget/${p.id}`;
      const kept = await put(path, {
        name: "renamed",
        config: { limit_usd: 5, reset_interval: "daily", include_byok_in_budgets: true },
      });
      expectStatus(kept, 200);
      expect(kept.body.data).to.deep.include({
        name: "renamed",
        config: { limit_usd: 5, reset_interval: "daily", include_byok_in_budgets: true },
        api_key_hashes: [key.data.hash],
        member_ids: ["u1"],
      });
      const replaced = await put(path, {
        name: "renamed",
        config: BUDGET,
        api_key_hashes: [],
        member_ids: ["u2", "u3"],
      });
      expect(replaced.body.data).to.deep.include({ api_key_hashes: [], member_ids: ["u2", "u3"] });
      expectError(
        await put(path, { name: "x", config: BUDGET, member_ids: [] }),
        400,
        /api_key_hashes and member_ids are sent together/,
      );
      expectError(
        await put(`/api/v1/guardrails/policies/budget/${randomUUID()}`, {
          name: "x",
          config: BUDGET,
        }),
        404,
      );
    });

    it("keeps one workspace default per type and shows opted-out and overridden subjects", async () => {
      const ws = await createWorkspace(h.api);
      const [k1, k2] = [
        await createKey(h.api, { workspace_id: ws.id }),
        await createKey(h.api, { workspace_id: ws.id }),
      ];
      const first = await createPolicy("budget", {
        workspace_id: ws.id,
        config: BUDGET,
        is_workspace_default: true,
      });
      const second = await createPolicy("budget", {
        workspace_id: ws.id,
        config: BUDGET,
        is_workspace_default: true,
        opted_out_api_key_hashes: [k1.data.hash],
      });
      const firstNow = await h.api.get(`/api/v1/guardrails/policies/budget/${first.id}`);
      expect(firstNow.body.data.is_workspace_default).to.equal(false);
      const own = await createPolicy("budget", {
        workspace_id: ws.id,
        config: BUDGET,
        api_key_hashes: [k2.data.hash],
      });
      const detail = await h.api.get(`/api/v1/guardrails/policies/budget/${second.id}`);
      expect(detail.body.data).to.deep.include({
        is_workspace_default: true,
        opted_out_api_key_hashes: [k1.data.hash],
        overridden_api_key_hashes: [k2.data.hash],
      });
      const s1 = await keyAssignment(k1.data.hash, ws.id);
      expect(s1.body).to.deep.equal({
        data: { opted_out: true, policy_ids: [], workspace_default_policy_ids: [] },
      });
      const s2 = await keyAssignment(k2.data.hash, ws.id);
      expect(s2.body.data).to.deep.equal({
        opted_out: false,
        policy_ids: [own.id],
        workspace_default_policy_ids: [],
      });
      const m = await memberAssignment("anyone", ws.id);
      expect(m.body.data).to.deep.equal({
        opted_out: false,
        policy_ids: [],
        workspace_default_policy_ids: [second.id],
      });
    });
  });

  describe("workspace-wide policies", () => {
    it("lists, creates, replaces and deletes an account policy in OpenRouter's shape", async () => {
      const ws = await createWorkspace(h.api);
      const base = "/api/v1/guardrails/policies/account";
      const created = await h.api.post(base, {
        name: "Everyone",
        policy_type: "model_availability",
        config: { enforce_zdr: true },
        workspace_ids: [ws.id],
      });
      expectStatus(created, 201);
      const p = created.body.data;
      expect(Object.keys(p).sort()).to.deep.equal([
        "checks",
        "config",
        "created_at",
        "id",
        "is_default",
        "is_synced",
        "is_workspace_default_synced",
        "last_check_run",
        "name",
        "opted_out_workspace_ids",
        "policy_type",
        "shadow",
        "updated_at",
        "workspace_count",
        "workspace_ids",
      ]);
      expect(p).to.deep.include({
        is_default: false,
        workspace_ids: [ws.id],
        workspace_count: 1,
        shadow: null,
      });
      const list = await h.api.get(`${base}?policy_type=model_availability`);
      expect(list.body.data.map((x: { id: string }) => x.id)).to.include(p.id);
      const replaced = await put(`${base}/${p.id}`, { name: "All", config: {}, is_default: true });
      expectStatus(replaced, 200);
      // Omitted workspace lists keep the stored ones.
      expect(replaced.body.data).to.deep.include({
        name: "All",
        is_default: true,
        workspace_ids: [ws.id],
      });
      expectError(
        await put(`${base}/${p.id}`, { name: "x", config: {}, policy_type: "budget" }),
        400,
        /policy_type must stay/,
      );
      expectError(
        await h.api.post(base, {
          name: "x",
          policy_type: "budget",
          config: BUDGET,
          workspace_ids: [randomUUID()],
        }),
        400,
        /workspace_ids\[0\] .* is not a workspace/,
      );
      expect((await h.api.delete(`${base}/${p.id}`)).body).to.deep.equal({ deleted: true });
      expectError(await h.api.delete(`${base}/${p.id}`), 404);
      expectError(await put(`${base}/${randomUUID()}`, { name: "x", config: {} }), 404);
    });
  });

  describe("guardrails as policies", () => {
    it("a guardrail appears as a mapped policy of each type it sets, and its changes flow in", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const g = (
        await h.api.post("/api/v1/guardrails", {
          name: "Legacy",
          workspace_id: ws.id,
          limit_usd: 50,
          reset_interval: "weekly",
          allowed_models: ["openai/gpt-4o"],
        })
      ).body.data;
      expectStatus(
        await h.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, {
          key_hashes: [key.data.hash],
        }),
        200,
      );
      const budgets = await h.api.get(`/api/v1/guardrails/policies/budget?workspace_id=${ws.id}`);
      const mapped = budgets.body.data.find((p: { id: string }) => p.id === g.id);
      expect(mapped).to.deep.include({
        name: "Legacy",
        policy_type: "budget",
        config: { limit_usd: 50, reset_interval: "weekly", include_byok_in_budgets: false },
        api_key_count: 1,
        is_legacy_mapped: true,
        legacy_guardrail_ids: [g.id],
      });
      const models = await h.api.get(`/api/v1/guardrails/policies/model_availability/${g.id}`);
      expectStatus(models, 200);
      expect(models.body.data).to.deep.include({
        reference: "legacy_mapping",
        api_key_hashes: [key.data.hash],
      });
      expect(models.body.data.config.allowed_models).to.deep.equal(["openai/gpt-4o"]);
      // It sets no content filters: no moderation policy.
      expectError(await h.api.get(`/api/v1/guardrails/policies/moderation/${g.id}`), 404);

      expectStatus(await h.api.patch(`/api/v1/guardrails/${g.id}`, { limit_usd: 75 }), 200);
      const after = await h.api.get(`/api/v1/guardrails/policies/budget/${g.id}`);
      expect(after.body.data.config.limit_usd).to.equal(75);
    });

    it("editing a mapped policy moves its type to the workspace: replaced, then managed there", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const g = (
        await h.api.post("/api/v1/guardrails", {
          name: "Legacy",
          workspace_id: ws.id,
          limit_usd: 50,
          reset_interval: "weekly",
          allowed_models: ["openai/gpt-4o"],
        })
      ).body.data;
      expectStatus(
        await h.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, {
          key_hashes: [key.data.hash],
        }),
        200,
      );
      const edited = await put(`/api/v1/guardrails/policies/budget/${g.id}`, {
        name: "Team budget",
        policy_type: "budget",
        config: { ...BUDGET, limit_usd: 80 },
      });
      expectStatus(edited, 200);
      expect(edited.body.data).to.deep.include({
        id: g.id,
        name: "Team budget",
        api_key_hashes: [key.data.hash],
        is_legacy_mapped: false,
        legacy_guardrail_ids: [],
        reference: null,
      });
      const budgets = await h.api.get(`/api/v1/guardrails/policies/budget?workspace_id=${ws.id}`);
      expect(budgets.body.data).to.have.length(1);
      expect(budgets.body.data[0]).to.deep.include({
        id: g.id,
        is_legacy_mapped: false,
        replaced_legacy_guardrail_ids: [g.id],
      });
      // The other types still flow from the guardrail.
      const models = await h.api.get(`/api/v1/guardrails/policies/model_availability/${g.id}`);
      expect(models.body.data.is_legacy_mapped).to.equal(true);
      // The guardrails API keeps working for everything but the budget it no longer governs.
      expectError(
        await h.api.patch(`/api/v1/guardrails/${g.id}`, { limit_usd: 75 }),
        400,
        /^limit_usd cannot change here: budget settings of workspace .* are managed through \/api\/v1\/guardrails\/policies\/budget/,
      );
      expectStatus(await h.api.patch(`/api/v1/guardrails/${g.id}`, { limit_usd: 50 }), 200);
      expectStatus(await h.api.patch(`/api/v1/guardrails/${g.id}`, { name: "Renamed" }), 200);
      expectError(
        await h.api.post("/api/v1/guardrails", {
          name: "New budget",
          workspace_id: ws.id,
          limit_usd: 5,
          reset_interval: "daily",
        }),
        400,
        /^limit_usd cannot change here/,
      );
      const created = await h.api.post("/api/v1/guardrails", {
        name: "Models only",
        workspace_id: ws.id,
        allowed_models: ["openai/gpt-4o"],
      });
      expectStatus(created, 201);
      // Deleting the guardrail leaves the policy that replaced its budget.
      expectStatus(await h.api.delete(`/api/v1/guardrails/${g.id}`), 200);
      expectStatus(await h.api.get(`/api/v1/guardrails/policies/budget/${g.id}`), 200);
      expectStatus(await h.api.delete(`/api/v1/guardrails/policies/budget/${g.id}`), 200);
      expectError(await h.api.get(`/api/v1/guardrails/policies/budget/${g.id}`), 404);
      // The audit log names the replacement as a create.
      const audit = await pollUntil(
        () =>
          h.api.get(
            `/api/v1/audit-log?resource_type=guardrail_policy&resource_id=${g.id}&workspace_id=${ws.id}`,
          ),
        (r) => r.body.data?.length === 3,
      );
      expect(audit.body.data.map((e: { action: string }) => e.action).sort()).to.deep.equal([
        "guardrail_policy.create",
        "guardrail_policy.delete",
        "guardrail_policy.update",
      ]);
    });
  });

  describe("assignments with expected_assignment", () => {
    it("assigns and unassigns for a key and a member; a stale expected state is 409 and changes nothing", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const a = await createPolicy("budget", { workspace_id: ws.id, config: BUDGET });
      const b = await createPolicy("budget", { workspace_id: ws.id, config: BUDGET });
      const keyPath = `/api/v1/guardrails/policies/assignments/api-keys/${key.data.hash}`;
      const change = (policy_id: string, assigned: boolean, expected_assignment: unknown) =>
        put(keyPath, {
          assigned,
          expected_assignment,
          policy_id,
          policy_type: "budget",
          workspace_id: ws.id,
        });

      expect((await keyAssignment(key.data.hash, ws.id)).body.data).to.deep.equal(none);
      const assigned = await change(a.id, true, none);
      expectStatus(assigned, 200);
      expect(assigned.body).to.deep.equal({ data: true });
      const withA = { opted_out: false, policy_ids: [a.id], workspace_default_policy_ids: [] };
      expect((await keyAssignment(key.data.hash, ws.id)).body.data).to.deep.equal(withA);

      // A second operator still holding the old state is refused, and nothing changes.
      expectError(await change(b.id, true, none), 409, /expected_assignment/);
      expect((await keyAssignment(key.data.hash, ws.id)).body.data).to.deep.equal(withA);

      // With the current state, assigning b replaces a (one policy of a type per subject).
      expect((await change(b.id, true, withA)).body).to.deep.equal({ data: true });
      const withB = { ...withA, policy_ids: [b.id] };
      expect((await keyAssignment(key.data.hash, ws.id)).body.data).to.deep.equal(withB);
      expect(
        (await h.api.get(`/api/v1/guardrails/policies/budget/${a.id}`)).body.data.api_key_hashes,
      ).to.deep.equal([]);
      // Assigning what is already assigned changes nothing.
      expect((await change(b.id, true, withB)).body).to.deep.equal({ data: false });
      expect((await change(b.id, false, withB)).body).to.deep.equal({ data: true });
      expect((await keyAssignment(key.data.hash, ws.id)).body.data).to.deep.equal(none);

      // Members: the same, by user id.
      const memberPath = "/api/v1/guardrails/policies/assignments/members/user_42";
      const m = await put(memberPath, {
        assigned: true,
        expected_assignment: none,
        policy_id: a.id,
        policy_type: "budget",
        workspace_id: ws.id,
      });
      expect(m.body).to.deep.equal({ data: true });
      expect((await memberAssignment("user_42", ws.id)).body.data.policy_ids).to.deep.equal([a.id]);
      expectError(
        await put(memberPath, {
          assigned: false,
          expected_assignment: none,
          policy_id: a.id,
          policy_type: "budget",
          workspace_id: ws.id,
        }),
        409,
      );
    });

    it("a key a guardrail governs shows its mapped policy, and a first change sent with that state applies", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const legacy = async (name: string) =>
        (
          await h.api.post("/api/v1/guardrails", {
            name,
            workspace_id: ws.id,
            limit_usd: 5,
            reset_interval: "daily",
          })
        ).body.data;
      const g1 = await legacy("Assigned");
      const g2 = await legacy("Other");
      expectStatus(
        await h.api.post(`/api/v1/guardrails/${g1.id}/assignments/keys`, {
          key_hashes: [key.data.hash],
        }),
        200,
      );
      // The type is still the guardrails': the state is what governs the key, the mapped policy.
      const state = (await keyAssignment(key.data.hash, ws.id)).body.data;
      expect(state).to.deep.equal({
        opted_out: false,
        policy_ids: [g1.id],
        workspace_default_policy_ids: [],
      });
      // The first policies write of the type (this assignment) moves it, and the state read before
      // is the state it finds, so the change applies instead of a 409 no read could avoid.
      const moved = await put(`/api/v1/guardrails/policies/assignments/api-keys/${key.data.hash}`, {
        assigned: true,
        expected_assignment: state,
        policy_id: g2.id,
        policy_type: "budget",
        workspace_id: ws.id,
      });
      expectStatus(moved, 200);
      expect(moved.body).to.deep.equal({ data: true });
      expect((await keyAssignment(key.data.hash, ws.id)).body.data.policy_ids).to.deep.equal([
        g2.id,
      ]);
    });

    it("removing the workspace default from a subject opts it out; assigning it again opts back in", async () => {
      const ws = await createWorkspace(h.api);
      const d = await createPolicy("moderation", {
        workspace_id: ws.id,
        config: {},
        is_workspace_default: true,
      });
      const path = "/api/v1/guardrails/policies/assignments/members/user_7";
      const inherits = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [d.id] };
      const optedOut = { opted_out: true, policy_ids: [], workspace_default_policy_ids: [] };
      const body = (assigned: boolean, expected_assignment: unknown) => ({
        assigned,
        expected_assignment,
        policy_id: d.id,
        policy_type: "moderation",
        workspace_id: ws.id,
      });
      expect((await put(path, body(false, inherits))).body).to.deep.equal({ data: true });
      expect((await memberAssignment("user_7", ws.id, "moderation")).body.data).to.deep.equal(
        optedOut,
      );
      const detail = await h.api.get(`/api/v1/guardrails/policies/moderation/${d.id}`);
      expect(detail.body.data.opted_out_member_ids).to.deep.equal(["user_7"]);
      expect((await put(path, body(true, optedOut))).body).to.deep.equal({ data: true });
      expect((await memberAssignment("user_7", ws.id, "moderation")).body.data.opted_out).to.equal(
        false,
      );
    });

    it("of four changes sent at once from the same expected state, exactly one wins", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      const policies = await Promise.all(
        [1, 2, 3, 4].map(() => createPolicy("budget", { workspace_id: ws.id, config: BUDGET })),
      );
      const answers = await Promise.all(
        policies.map((p) =>
          put(`/api/v1/guardrails/policies/assignments/api-keys/${key.data.hash}`, {
            assigned: true,
            expected_assignment: none,
            policy_id: p.id,
            policy_type: "budget",
            workspace_id: ws.id,
          }),
        ),
      );
      expect(answers.map((r) => r.status).sort()).to.deep.equal([200, 409, 409, 409]);
      const winner = policies[answers.findIndex((r) => r.status === 200)];
      expect((await keyAssignment(key.data.hash, ws.id)).body.data.policy_ids).to.deep.equal([
        winner.id,
      ]);
    });
  });

  it("the audit log records each policy and assignment change", async () => {
    const ws = await createWorkspace(h.api);
    const p = await createPolicy("budget", { workspace_id: ws.id, config: BUDGET });
    await put(`/api/v1/guardrails/policies/budget/${p.id}`, { name: "renamed", config: BUDGET });
    await put("/api/v1/guardrails/policies/assignments/members/user_9", {
      assigned: true,
      expected_assignment: none,
      policy_id: p.id,
      policy_type: "budget",
      workspace_id: ws.id,
    });
    await h.api.delete(`/api/v1/guardrails/policies/budget/${p.id}`);
    const actions = [
      "guardrail_policy.create",
      "guardrail_policy.update",
      "guardrail_policy.assign",
      "guardrail_policy.delete",
    ];
    const res = await pollUntil(
      () => h.api.get(`/api/v1/audit-log?resource_type=guardrail_policy&workspace_id=${ws.id}`),
      (r) => r.body.data?.length === actions.length,
    );
    expectStatus(res, 200);
    // biome-ignore lint/suspicious/noExplicitAny: audit JSON
    const events = res.body.data as any[];
    expect(events.map((e) => e.action).sort()).to.deep.equal([...actions].sort());
    const update = events.find((e) => e.action === "guardrail_policy.update");
    expect(update.changes.name).to.deep.equal({ before: p.name, after: "renamed" });
  });

  describe("errors", () => {
    it("400 names the field and the rule", async () => {
      const ws = await createWorkspace(h.api);
      const post = (type: string, body: Record<string, unknown>) =>
        h.api.post(`/api/v1/guardrails/policies/${type}`, {
          name: "p",
          policy_type: type,
          workspace_id: ws.id,
          ...body,
        });
      expectError(
        await post("budget", { config: { limit_usd: 10 } }),
        400,
        /config\.limit_usd and config\.reset_interval must be set together/,
      );
      expectError(
        await post("budget", { config: { limit_usd: -1, reset_interval: "daily" } }),
        400,
        /config\.limit_usd must be a number/,
      );
      expectError(
        await post("budget", { config: { limit_usd: 1, reset_interval: "hourly" } }),
        400,
        /config\.reset_interval must be one of/,
      );
      expectError(
        await post("budget", { config: { ...BUDGET, allowed_models: ["x"] } }),
        400,
        /config\.allowed_models is not a setting of a budget policy/,
      );
      expectError(
        await post("model_availability", { config: { allowed_data_regions: [] } }),
        400,
        /config\.allowed_data_regions must have at least 1 element/,
      );
      expectError(
        await post("model_availability", { config: { allowed_data_regions: ["mars"] } }),
        400,
        /config\.allowed_data_regions\[0\] must be one of/,
      );
      expectError(
        await post("moderation", {
          config: { content_filters: [{ pattern: "(", action: "block" }] },
        }),
        400,
        /config\.content_filters\[0\]\.pattern is not a usable regular expression/,
      );
      expectError(
        await post("moderation", {
          config: { content_filter_builtins: [{ slug: "nope", action: "block" }] },
        }),
        400,
        /slug must be a builtin filter/,
      );
      expectError(
        await post("budget", { config: BUDGET, policy_type: "moderation" }),
        400,
        /policy_type must be "budget"/,
      );
      expectError(
        await post("budget", { config: BUDGET, api_key_hashes: ["nope"] }),
        400,
        /api_key_hashes\[0\] is not an API key of workspace/,
      );
      expectError(
        await post("budget", { config: BUDGET, workspace_id: randomUUID() }),
        400,
        /workspace_id .* does not exist/,
      );
      expectError(await post("budget", { config: BUDGET, nmae: "typo" }), 400, /"nmae"/);
      expectError(
        await h.api.post("/api/v1/guardrails/policies/budget", {
          name: "p",
          policy_type: "budget",
        }),
        400,
        /config is required/,
      );
      expectError(await post("budget", { name: " ", config: BUDGET }), 400, /name/);
      expectError(
        await put("/api/v1/guardrails/policies/assignments/members/u", {
          assigned: true,
          policy_id: randomUUID(),
          policy_type: "budget",
        }),
        400,
        /expected_assignment is required/,
      );
      expectError(
        await put("/api/v1/guardrails/policies/assignments/members/u", {
          assigned: true,
          policy_id: randomUUID(),
          policy_type: "budget",
          expected_assignment: { opted_out: false, policy_ids: [] },
        }),
        400,
        /expected_assignment\.workspace_default_policy_ids is required/,
      );
      expectError(
        await h.api.get("/api/v1/guardrails/policies/assignments/members/u?policy_type=rate"),
        400,
        /policy_type must be one of/,
      );
    });

    it("404 for an unknown policy, key or workspace; 401 without a key; 403 for a standard key", async () => {
      const ws = await createWorkspace(h.api);
      const key = await createKey(h.api, { workspace_id: ws.id });
      expectError(
        await h.api.get(`/api/v1/guardrails/policies/budget/${randomUUID()}`),
        404,
        /budget policy .* not found/,
      );
      expectError(await h.api.get("/api/v1/guardrails/policies/budget/not-a-uuid"), 404);
      expectError(await keyAssignment("0".repeat(64), ws.id), 404, /API key/);
      expectError(await memberAssignment("u", randomUUID()), 404, /workspace/);
      expectError(
        await put(`/api/v1/guardrails/policies/assignments/api-keys/${key.data.hash}`, {
          assigned: true,
          expected_assignment: none,
          policy_id: randomUUID(),
          policy_type: "budget",
          workspace_id: ws.id,
        }),
        404,
        /policy/,
      );
      expectError(await h.anon.get("/api/v1/guardrails/policies/budget"), 401);
      expectError(await h.api.withKey(key.secret).get("/api/v1/guardrails/policies/budget"), 403);
    });
  });
});
