import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";

interface Member {
  id: string;
  user_id: string;
  workspace_id: string;
  role: string;
  created_at: string;
  implicit: boolean;
}

describe("gateway: workspace members", () => {
  const h = useSystem();
  const members = (id: string) => `/api/v1/workspaces/${id}/members`;
  const list = async (id: string, query = "limit=100") => {
    const res = await h.api.get(`${members(id)}?${query}`);
    expectStatus(res, 200);
    return res.body as { data: Member[]; total_count: number };
  };
  const userIds = (page: { data: Member[] }) => page.data.map((m) => m.user_id);

  it("adds members (200 { added_count, data }), lists them, and a repeat adds nothing", async () => {
    const ws = await createWorkspace(h.api);
    expect(await list(ws.id)).to.deep.equal({ data: [], total_count: 0 });

    const res = await h.api.post(`${members(ws.id)}/add`, { user_ids: ["alice", "bob", "alice"] });
    expectStatus(res, 200);
    expect(Object.keys(res.body).sort()).to.deep.equal(["added_count", "data"]);
    expect(res.body.added_count).to.equal(2);
    const added = res.body.data as Member[];
    expect(added.map((m) => m.user_id)).to.deep.equal(["alice", "bob"]);
    for (const m of added) {
      expect(Object.keys(m).sort()).to.deep.equal([
        "created_at",
        "id",
        "implicit",
        "role",
        "user_id",
        "workspace_id",
      ]);
      expect(m).to.include({ workspace_id: ws.id, role: "member", implicit: false });
      expect(m.id).to.match(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(m.created_at))).to.equal(false);
    }

    // By slug too; the same memberships, in the order they were added.
    const page = await list(ws.slug);
    expect(page.total_count).to.equal(2);
    expect(page.data).to.deep.equal(added);

    const again = await h.api.post(`${members(ws.id)}/add`, { user_ids: ["bob", "carol"] });
    expectStatus(again, 200);
    expect(again.body.added_count).to.equal(1);
    expect(again.body.data.map((m: Member) => m.user_id)).to.deep.equal(["bob", "carol"]);
    // bob keeps his membership: same id, same created_at.
    expect(again.body.data[0]).to.deep.equal(added[1]);
    expect((await list(ws.id)).total_count).to.equal(3);
  });

  it("pages the list and refuses bad paging and unknown parameters", async () => {
    const ws = await createWorkspace(h.api);
    const ids = ["u1", "u2", "u3", "u4", "u5"];
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ids }), 200);
    const all = await list(ws.id);
    const first = await list(ws.id, "limit=2");
    const rest = await list(ws.id, "offset=2&limit=100");
    expect(first.total_count).to.equal(5);
    expect([...first.data, ...rest.data]).to.deep.equal(all.data);
    for (const q of ["limit=0", "limit=101", "offset=-1", "limit=x", "role=admin"]) {
      expectError(await h.api.get(`${members(ws.id)}?${q}`), 400, /limit|offset|role/);
    }
  });

  it("removes members (200 { removed_count }) and counts only those that were added", async () => {
    const ws = await createWorkspace(h.api);
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["a", "b", "c"] }), 200);
    const res = await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["a", "c", "zed"] });
    expectStatus(res, 200);
    expect(res.body).to.deep.equal({ removed_count: 2 });
    expect(userIds(await list(ws.id))).to.deep.equal(["b"]);
    const again = await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["a"] });
    expect(again.body).to.deep.equal({ removed_count: 0 });
  });

  it("lists the users its keys, member assignments and policies name, as implicit members", async () => {
    const ws = await createWorkspace(h.api);
    await createKey(h.api, { workspace_id: ws.id, member_user_id: "key-owner" });
    await createKey(h.api, { workspace_id: ws.id });
    const g = await createGuardrail(h.api, { workspace_id: ws.id });
    expectStatus(
      await h.api.post(`/api/v1/guardrails/${g.id}/assignments/members`, {
        member_user_ids: ["assigned-user"],
      }),
      200,
    );
    const policy = await h.api.post("/api/v1/guardrails/policies/budget", {
      name: "members policy",
      policy_type: "budget",
      config: { include_byok_in_budgets: false, limit_usd: 200, reset_interval: "monthly" },
      workspace_id: ws.id,
      member_ids: ["policy-user"],
    });
    expectStatus(policy, 201);
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["key-owner"] }), 200);

    const page = await list(ws.id);
    expect(userIds(page).sort()).to.deep.equal(["assigned-user", "key-owner", "policy-user"]);
    expect(page.total_count).to.equal(3);
    const byUser = new Map(page.data.map((m) => [m.user_id, m]));
    // An added member is listed once, as added; the others are implicit.
    expect(byUser.get("key-owner")?.implicit).to.equal(false);
    expect(byUser.get("assigned-user")).to.include({ implicit: true, role: "member" });
    expect(byUser.get("policy-user")).to.include({ implicit: true, workspace_id: ws.id });
    // Another workspace lists none of them.
    const other = await createWorkspace(h.api);
    expect((await list(other.id)).total_count).to.equal(0);
  });

  it("refuses (409) to remove a member who owns enabled keys in the workspace, and removes nothing", async () => {
    const ws = await createWorkspace(h.api);
    const { data: key } = await createKey(h.api, { workspace_id: ws.id, member_user_id: "dev" });
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["dev", "ops"] }), 200);
    expectError(
      await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["ops", "dev"] }),
      409,
      /user_ids "dev" own enabled API keys .* cannot be removed/,
    );
    expect(userIds(await list(ws.id)).sort()).to.deep.equal(["dev", "ops"]);
    // A disabled key no longer holds the member.
    expectStatus(await h.api.patch(`/api/v1/keys/${key.hash}`, { disabled: true }), 200);
    const res = await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["ops", "dev"] });
    expect(res.body).to.deep.equal({ removed_count: 2 });
    // The disabled key still names its owner: listed, implicit.
    const page = await list(ws.id);
    expect(page.data.map((m) => [m.user_id, m.implicit])).to.deep.equal([["dev", true]]);
  });

  it("answers 400 naming user_ids for an empty, too long, non-string or missing list", async () => {
    const ws = await createWorkspace(h.api);
    const max = ACCOUNT_LIMITS.membersPerCallMax;
    for (const verb of ["add", "remove"]) {
      const post = (body: unknown) => h.api.post(`${members(ws.id)}/${verb}`, body);
      expectError(await post({}), 400, /user_ids is required/);
      expectError(await post({ user_ids: [] }), 400, new RegExp(`user_ids must hold 1 to ${max}`));
      const many = Array.from({ length: max + 1 }, (_, i) => `user-${i}`);
      expectError(await post({ user_ids: many }), 400, /user_ids must hold 1 to/);
      expectError(await post({ user_ids: "alice" }), 400, /user_ids must be an array/);
      expectError(await post({ user_ids: ["ok", 7] }), 400, /user_ids\[1\] must be a string/);
      expectError(await post({ user_ids: [null] }), 400, /user_ids\[0\] must be a string/);
      expectError(await post({ user_ids: ["  "] }), 400, /user_ids\[0\] must be 1 to/);
      const long = "x".repeat(ACCOUNT_LIMITS.memberIdMax + 1);
      expectError(await post({ user_ids: ["ok", long] }), 400, /user_ids\[1\] must be 1 to 256/);
      expectError(await post({ user_ids: ["a"], role: "admin" }), 400, /Unknown field "role"/);
    }
    expect((await list(ws.id)).total_count).to.equal(0);
  });

  it("answers 404 for an unknown workspace, 403 for a standard key and 401 without a key", async () => {
    for (const path of [
      members("no-such-workspace"),
      `${members("3f1c1b2a-0000-4000-8000-000000000000")}`,
    ]) {
      expectError(await h.api.get(path), 404, /workspace .* not found/);
      expectError(await h.api.post(`${path}/add`, { user_ids: ["a"] }), 404, /not found/);
      expectError(await h.api.post(`${path}/remove`, { user_ids: ["a"] }), 404, /not found/);
    }
    const ws = await createWorkspace(h.api);
    const { secret } = await createKey(h.api, { workspace_id: ws.id });
    const standard = h.api.withKey(secret);
    expectError(await standard.get(members(ws.id)), 403);
    expectError(await standard.post(`${members(ws.id)}/add`, { user_ids: ["a"] }), 403);
    expectError(await standard.post(`${members(ws.id)}/remove`, { user_ids: ["a"] }), 403);
    expectError(await h.anon.get(members(ws.id)), 401);
    expectError(await h.anon.post(`${members(ws.id)}/add`, { user_ids: ["a"] }), 401);
    expectError(await h.anon.post(`${members(ws.id)}/remove`, { user_ids: ["a"] }), 401);
    expect((await list(ws.id)).total_count).to.equal(0);
  });

  it("audits an add and a remove that changed something, and nothing for one that did not", async () => {
    const ws = await createWorkspace(h.api);
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["x", "y"] }), 200);
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["x"] }), 200);
    expectStatus(await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["y", "nobody"] }), 200);
    expectStatus(await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["nobody"] }), 200);
    const events = (await h.api.get(`/api/v1/audit-log?workspace_id=${ws.id}&limit=100`)).body
      .data as { action: string; resource: unknown; changes: Record<string, unknown> }[];
    const ours = events.filter((e) => e.action.startsWith("workspace.members_"));
    expect(ours.map((e) => e.action)).to.deep.equal([
      "workspace.members_remove",
      "workspace.members_add",
    ]);
    expect(ours[0]?.changes).to.deep.equal({ user_ids: { before: ["y"], after: null } });
    expect(ours[1]?.changes).to.deep.equal({ user_ids: { before: null, after: ["x", "y"] } });
    expect(ours.map((e) => e.resource)).to.deep.equal([
      { type: "workspace", id: ws.id, label: ws.name },
      { type: "workspace", id: ws.id, label: ws.name },
    ]);
  });

  it("applies a retried add with the same Idempotency-Key once, answering it as the first time", async () => {
    const ws = await createWorkspace(h.api);
    const idem = { headers: { "idempotency-key": randomUUID() } };
    const add = () => h.api.request("POST", `${members(ws.id)}/add`, { user_ids: ["once"] }, idem);
    const first = await add();
    expectStatus(first, 200);
    // Removed meanwhile: a retry that ran again would add the member back.
    expectStatus(await h.api.post(`${members(ws.id)}/remove`, { user_ids: ["once"] }), 200);
    const retry = await add();
    expectStatus(retry, 200);
    expect(retry.body).to.deep.equal(first.body);
    expect(retry.headers.get("idempotent-replayed")).to.equal("true");
    expect((await list(ws.id)).total_count).to.equal(0);
  });

  it("deletes the members with their workspace", async () => {
    const ws = await createWorkspace(h.api);
    expectStatus(await h.api.post(`${members(ws.id)}/add`, { user_ids: ["gone"] }), 200);
    expectStatus(await h.api.delete(`/api/v1/workspaces/${ws.id}`), 200);
    expectError(await h.api.get(members(ws.id)), 404);
    // A new workspace of the same slug starts without members.
    const again = await createWorkspace(h.api, { name: ws.name, slug: ws.slug });
    expect((await list(again.id)).total_count).to.equal(0);
  });
});
