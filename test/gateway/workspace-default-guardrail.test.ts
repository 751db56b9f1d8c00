import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createWorkspace, expectGuardrail, useSystem } from "../kit/gateway-harness.js";

describe("gateway: workspace default guardrail", () => {
  const h = useSystem();
  const path = (id: string) => `/api/v1/guardrails/${id}`;

  it("is named by the workspace's default_guardrail_id, distinct per workspace and stable", async () => {
    const a = await createWorkspace(h.api);
    const b = await createWorkspace(h.api);
    expect(a.default_guardrail_id).to.match(/^[0-9a-f-]{36}$/);
    expect(a.default_guardrail_id).to.not.equal(b.default_guardrail_id);
    expect(a.default_guardrail_id).to.not.equal(a.id);
    const again = await h.api.get(`/api/v1/workspaces/${a.id}`);
    expect(again.body.data.default_guardrail_id).to.equal(a.default_guardrail_id);
  });

  it("is 404 until configured, and not listed", async () => {
    const ws = await createWorkspace(h.api);
    expectError(await h.api.get(path(ws.default_guardrail_id)), 404);
    const list = await h.api.get(`/api/v1/guardrails?workspace_id=${ws.id}`);
    expectStatus(list, 200);
    expect(list.body).to.deep.equal({ data: [], total_count: 0 });
  });

  it("is materialized by PATCH, then readable and listed as the workspace default", async () => {
    const ws = await createWorkspace(h.api);
    const id = ws.default_guardrail_id;
    const res = await h.api.patch(path(id), { allowed_models: ["openai/gpt-4o-mini-tts"] });
    expectStatus(res, 200);
    const g = res.body.data;
    expectGuardrail(g);
    expect(g.id).to.equal(id);
    expect(g.workspace_id).to.equal(ws.id);
    expect(g.is_workspace_default).to.equal(true);
    expect(g.name).to.equal(`Workspace ${ws.id} Default`);
    expect(g.allowed_models).to.deep.equal(["openai/gpt-4o-mini-tts"]);
    expect(g.updated_at).to.be.a("string");

    const read = await h.api.get(path(id));
    expectStatus(read, 200);
    expect(read.body.data).to.deep.equal(g);
    const list = await h.api.get(`/api/v1/guardrails?workspace_id=${ws.id}`);
    expect(list.body.total_count).to.equal(1);
    expect(list.body.data[0].id).to.equal(id);
    expect(list.body.data[0].is_workspace_default).to.equal(true);
  });

  it("also exists for the default workspace", async () => {
    const ws = await h.api.get(`/api/v1/workspaces/${h.system.defaultWorkspaceId}`);
    const id = ws.body.data.default_guardrail_id;
    expectError(await h.api.get(path(id)), 404);
    const res = await h.api.patch(path(id), { enforce_zdr: true });
    expectStatus(res, 200);
    expect(res.body.data.is_workspace_default).to.equal(true);
    expect(res.body.data.enforce_zdr_other).to.equal(true);
    expect(res.body.data.name).to.equal(`Workspace ${h.system.defaultWorkspaceId} Default`);
  });

  it("cannot be renamed (400), though sending its own name is fine", async () => {
    const ws = await createWorkspace(h.api);
    const id = ws.default_guardrail_id;
    // Not even on the PATCH that would materialize it.
    expectError(await h.api.patch(path(id), { name: "Mine now" }), 400, /name/);
    expectError(await h.api.get(path(id)), 404);
    expectStatus(await h.api.patch(path(id), { description: "configured" }), 200);
    expectError(await h.api.patch(path(id), { name: "Mine now" }), 400, /name/);
    expect((await h.api.get(path(id))).body.data.name).to.equal(`Workspace ${ws.id} Default`);
    const same = await h.api.patch(path(id), {
      name: `Workspace ${ws.id} Default`,
      description: "same name",
    });
    expectStatus(same, 200);
    expect(same.body.data.description).to.equal("same name");
  });

  it("stays unconfigured when the materializing PATCH is invalid", async () => {
    const ws = await createWorkspace(h.api);
    const id = ws.default_guardrail_id;
    expectError(await h.api.patch(path(id), { allowed_data_regions: [] }), 400);
    expectError(await h.api.patch(path(id), { limit_usd: 5 }), 400);
    expectError(await h.api.get(path(id)), 404);
  });

  it("reverts to unconfigured (404) when deleted, and can be materialized afresh", async () => {
    const ws = await createWorkspace(h.api);
    const id = ws.default_guardrail_id;
    expectStatus(await h.api.patch(path(id), { allowed_providers: ["openai"] }), 200);
    const del = await h.api.delete(path(id));
    expectStatus(del, 200);
    expect(del.body).to.deep.equal({ deleted: true });
    expectError(await h.api.get(path(id)), 404);
    expectError(await h.api.delete(path(id)), 404);
    const ws2 = await h.api.get(`/api/v1/workspaces/${ws.id}`);
    expect(ws2.body.data.default_guardrail_id).to.equal(id);

    const again = await h.api.patch(path(id), { description: "fresh" });
    expectStatus(again, 200);
    expect(again.body.data.allowed_providers).to.equal(null);
    expect(again.body.data.description).to.equal("fresh");
  });

  it("is gone with its workspace", async () => {
    const ws = await createWorkspace(h.api);
    const id = ws.default_guardrail_id;
    expectStatus(await h.api.patch(path(id), { description: "x" }), 200);
    expectStatus(await h.api.delete(`/api/v1/workspaces/${ws.id}`), 200);
    expectError(await h.api.get(path(id)), 404);
    expectError(await h.api.patch(path(id), { description: "y" }), 404);
  });
});
