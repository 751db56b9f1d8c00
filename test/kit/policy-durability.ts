import { expect } from "chai";
import { endpoint, model, provider, writeCatalogFile } from "./catalog-entries.js";
import { expectError, expectStatus } from "./expect.js";
import type { FakeOpenAi } from "./fake-openai.js";
import { type Api, postSpeech } from "./http.js";

/** What the policy durability suites create, then expect back after a restart or a refill. */

export const ALLOWED = "quick/tts";
export const OTHER = "other/tts";
const NONE = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };
const POLICIES = "/api/v1/guardrails/policies";

/** A catalog of two paid models on the fake upstream, written in `dir`; answers its file. */
export function policyCatalog(upstream: FakeOpenAi, dir: string): string {
  return writeCatalogFile(dir, {
    providers: { quick: provider(upstream.baseUrl), other: provider(upstream.baseUrl) },
    models: [
      model(ALLOWED, [endpoint("quick", { price: 10 })], { voices: ["alloy"], description: "A" }),
      model(OTHER, [endpoint("other", { price: 10 })], { voices: ["alloy"], description: "B" }),
    ],
  });
}

export interface PolicyWorld {
  workspaceId: string;
  /** Governed by a zero budget policy assigned to it. */
  capped: { secret: string; hash: string };
  /** Governed only by the account policy (ALLOWED only). */
  free: { secret: string; hash: string };
  budgetId: string;
  accountId: string;
  /** A policy of a workspace deleted since. */
  deletedId: string;
  deletedWorkspaceId: string;
}

async function key(api: Api, workspaceId: string, name: string) {
  const res = await api.post("/api/v1/keys", { name, workspace_id: workspaceId });
  expectStatus(res, 201);
  return { secret: res.body.key as string, hash: res.body.data.hash as string };
}

/**
 * A workspace with a zero budget policy assigned to one key, a model availability policy that
 * is its default, an account policy allowing one model, and a deleted workspace's policy.
 */
export async function createPolicies(api: Api): Promise<PolicyWorld> {
  const ws = await api.post("/api/v1/workspaces", { name: "Policies kept" });
  expectStatus(ws, 201);
  const workspaceId: string = ws.body.data.id;
  const capped = await key(api, workspaceId, "capped");
  const free = await key(api, workspaceId, "free");
  const budget = await api.post(`${POLICIES}/budget`, {
    name: "Nothing to spend",
    policy_type: "budget",
    workspace_id: workspaceId,
    config: { limit_usd: 0, reset_interval: "daily", include_byok_in_budgets: false },
  });
  expectStatus(budget, 201);
  const budgetId: string = budget.body.data.id;
  expectStatus(
    await api.request("PUT", `${POLICIES}/assignments/api-keys/${capped.hash}`, {
      assigned: true,
      expected_assignment: NONE,
      policy_id: budgetId,
      policy_type: "budget",
      workspace_id: workspaceId,
    }),
    200,
  );
  expectStatus(
    await api.post(`${POLICIES}/moderation`, {
      name: "Default moderation",
      policy_type: "moderation",
      workspace_id: workspaceId,
      is_workspace_default: true,
      config: { content_filters: [{ pattern: "forbidden-word", action: "block" }] },
    }),
    201,
  );
  const account = await api.post(`${POLICIES}/account`, {
    name: "Everyone quick",
    policy_type: "model_availability",
    config: { allowed_models: [ALLOWED] },
    workspace_ids: [workspaceId],
  });
  expectStatus(account, 201);
  const doomed = await api.post("/api/v1/workspaces", { name: "Policies doomed" });
  expectStatus(doomed, 201);
  const gone = await api.post(`${POLICIES}/budget`, {
    name: "Gone with its workspace",
    policy_type: "budget",
    workspace_id: doomed.body.data.id,
    config: { limit_usd: 1, reset_interval: "daily", include_byok_in_budgets: false },
  });
  expectStatus(gone, 201);
  expectStatus(await api.delete(`/api/v1/workspaces/${doomed.body.data.id}`), 200);
  return {
    workspaceId,
    capped,
    free,
    budgetId,
    accountId: account.body.data.id,
    deletedId: gone.body.data.id,
    deletedWorkspaceId: doomed.body.data.id,
  };
}

/** Everything the policies API shows of the world: compared before and after. */
export async function policyViews(api: Api, w: PolicyWorld): Promise<unknown[]> {
  const paths = [
    ...["budget", "model_availability", "moderation"].map(
      (t) => `${POLICIES}/${t}?workspace_id=${w.workspaceId}`,
    ),
    `${POLICIES}/budget/${w.budgetId}`,
    `${POLICIES}/account`,
    `${POLICIES}/assignments/api-keys/${w.capped.hash}?workspace_id=${w.workspaceId}&policy_type=budget`,
    `${POLICIES}/assignments/api-keys/${w.free.hash}?workspace_id=${w.workspaceId}&policy_type=moderation`,
  ];
  const views: unknown[] = [];
  for (const path of paths) {
    const res = await api.get(path);
    expectStatus(res, 200);
    views.push(res.body);
  }
  return views;
}

/** The policies govern requests: the budget refuses, the account policy and the default filter too. */
export async function expectPoliciesEnforced(baseUrl: string, w: PolicyWorld): Promise<void> {
  const speak = (secret: string, m: string, input = "Policy.") =>
    postSpeech(baseUrl, secret, { model: m, voice: "alloy", input });
  expectError(await speak(w.capped.secret, ALLOWED), 403, /^Budget of policy "Nothing to spend"/);
  expectStatus(await speak(w.free.secret, ALLOWED), 200);
  expectError(await speak(w.free.secret, OTHER), 403, /not allowed|allowed_models/);
  expectError(
    await speak(w.free.secret, ALLOWED, "a forbidden-word here"),
    403,
    /^Request blocked by content filter/,
  );
}

/** The deleted workspace's policy is gone, and stays gone. */
export async function expectDeletedPolicyGone(api: Api, w: PolicyWorld): Promise<void> {
  const res = await api.get(`${POLICIES}/budget/${w.deletedId}`);
  expect(res.status, JSON.stringify(res.body)).to.equal(404);
}
