import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";

/** Destructive: deletes the default workspace, so it runs on a system of its own. */
describe("gateway: after the default workspace is deleted", () => {
  const h = useSystem();
  let defaultGuardrail: { id: string };
  let defaultKey: { data: { hash: string }; secret: string };

  before(async () => {
    defaultGuardrail = await createGuardrail(h.api);
    defaultKey = await createKey(h.api);
    expect(defaultGuardrail).to.have.property("workspace_id", h.system.defaultWorkspaceId);
    // A workspace with enabled keys cannot be deleted: disable the key first.
    expectStatus(
      await h.api.patch(`/api/v1/keys/${defaultKey.data.hash}`, { disabled: true }),
      200,
    );
    const res = await h.api.delete(`/api/v1/workspaces/${h.system.defaultWorkspaceId}`);
    expectStatus(res, 200);
    expect(res.body).to.deep.equal({ deleted: true });
  });

  it("rejects a guardrail create without workspace_id with 400 naming workspace_id", async () => {
    expectError(
      await h.api.post("/api/v1/guardrails", { name: "Homeless" }),
      400,
      /workspace_id.*(required|deleted)/,
    );
  });

  it("lists no guardrails without workspace_id: there is no default workspace to list", async () => {
    await createGuardrail(h.api, { workspace_id: (await createWorkspace(h.api)).id });
    const res = await h.api.get("/api/v1/guardrails");
    expectStatus(res, 200);
    expect(res.body).to.deep.equal({ data: [], total_count: 0 });
  });

  it("still creates guardrails with an explicit workspace_id", async () => {
    const ws = await createWorkspace(h.api);
    const g = await createGuardrail(h.api, { workspace_id: ws.id });
    expect(g.workspace_id).to.equal(ws.id);
  });

  it("rejects a standard key without workspace_id with 400", async () => {
    expectError(await h.api.post("/api/v1/keys", { name: "Homeless key" }), 400, /workspace_id/);
  });

  it("lists no default workspace and never recreates one", async () => {
    const list = (await h.api.get("/api/v1/workspaces?limit=100")).body.data;
    expect(list.filter((w: { is_default: boolean }) => w.is_default)).to.deep.equal([]);
    expect(list.map((w: { id: string }) => w.id)).not.to.include(h.system.defaultWorkspaceId);
    expectStatus(await h.anon.get("/healthz"), 200);
    expectError(await h.api.post("/api/v1/guardrails", { name: "Still homeless" }), 400);
  });

  it("took the default workspace's guardrails and keys with it", async () => {
    expectError(await h.api.get(`/api/v1/guardrails/${defaultGuardrail.id}`), 404);
    expectError(await h.api.withKey(defaultKey.secret).get("/api/v1/key"), 401);
    expectError(await h.api.get(`/api/v1/keys/${defaultKey.data.hash}`), 404);
  });

  it("keeps the operator's management key working", async () => {
    expectStatus(await h.api.get("/api/v1/key"), 200);
  });
});
