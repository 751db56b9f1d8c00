import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";

describe("gateway: workspaces", () => {
  const h = useSystem();
  const path = (id: string) => `/api/v1/workspaces/${id}`;

  describe("POST /workspaces", () => {
    it("answers 201 { data } with a slug derived from the name", async () => {
      const res = await h.api.post("/api/v1/workspaces", { name: "Voice Team #1 (Europe)" });
      expectStatus(res, 201);
      expect(Object.keys(res.body)).to.deep.equal(["data"]);
      const ws = res.body.data;
      expect(ws.id).to.match(/^[0-9a-f-]{36}$/);
      expect(ws).to.include({
        name: "Voice Team #1 (Europe)",
        slug: "voice-team-1-europe",
        is_default: false,
        updated_at: null,
      });
      expect(ws.default_guardrail_id).to.match(/^[0-9a-f-]{36}$/);
      expect(ws.created_at).to.be.a("string");
      expect((await h.api.get(path(ws.id))).body.data).to.deep.equal(ws);
    });

    it("takes an explicit slug and a description", async () => {
      const ws = await createWorkspace(h.api, { slug: "custom-slug", description: "Ours" });
      expect(ws).to.include({ slug: "custom-slug", description: "Ours" });
      // Reachable by slug as well.
      const bySlug = await h.api.get(path("custom-slug"));
      expectStatus(bySlug, 200);
      expect(bySlug.body.data.id).to.equal(ws.id);
    });

    it("answers 409 for a duplicate slug, derived or explicit", async () => {
      expectStatus(await h.api.post("/api/v1/workspaces", { name: "Twin" }), 201);
      expectError(await h.api.post("/api/v1/workspaces", { name: "twin" }), 409, /slug/);
      expectError(
        await h.api.post("/api/v1/workspaces", { name: "Other", slug: "twin" }),
        409,
        /slug/,
      );
    });

    it("validates the body", async () => {
      const post = (body: Record<string, unknown>) => h.api.post("/api/v1/workspaces", body);
      expectError(await post({}), 400, /name/);
      expectError(await post({ name: "" }), 400, /name/);
      expectError(await post({ name: "!!!" }), 400, /slug/);
      expectError(await post({ name: "ok", slug: "Not A Slug" }), 400, /slug/);
      expectError(await post({ name: "ok", id: randomUUID() }), 400, /"id"/);
      expectError(await post({ name: 3 }), 400, /name/);
    });
  });

  describe("GET /workspaces", () => {
    it("lists { data, total_count } with exactly one default workspace", async () => {
      await createWorkspace(h.api);
      const res = await h.api.get("/api/v1/workspaces?limit=100");
      expectStatus(res, 200);
      expect(Object.keys(res.body).sort()).to.deep.equal(["data", "total_count"]);
      expect(res.body.total_count).to.equal(res.body.data.length);
      const defaults = res.body.data.filter((w: { is_default: boolean }) => w.is_default);
      expect(defaults).to.have.length(1);
      expect(defaults[0].id).to.equal(h.system.defaultWorkspaceId);
      const one = await h.api.get(path(h.system.defaultWorkspaceId as string));
      expect(one.body.data.is_default).to.equal(true);
    });

    it("pages and rejects bad paging", async () => {
      const all = (await h.api.get("/api/v1/workspaces?limit=100")).body;
      const first = (await h.api.get("/api/v1/workspaces?limit=1")).body;
      const rest = (await h.api.get("/api/v1/workspaces?offset=1&limit=100")).body;
      expect(first.data).to.have.length(1);
      expect([...first.data, ...rest.data]).to.deep.equal(all.data);
      for (const q of ["limit=0", "limit=101", "offset=-5", "limit=1.0"]) {
        expectError(await h.api.get(`/api/v1/workspaces?${q}`), 400);
      }
    });
  });

  describe("GET/PATCH /workspaces/{id}", () => {
    it("answers 404 for an unknown workspace", async () => {
      expectError(await h.api.get(path(randomUUID())), 404);
      expectError(await h.api.patch(path(randomUUID()), { name: "x" }), 404);
      expectError(await h.api.delete(path(randomUUID())), 404);
    });

    it("renames, keeps the slug unless one is sent, and sets updated_at", async () => {
      const ws = await createWorkspace(h.api, { name: "Old name" });
      const res = await h.api.patch(path(ws.id), { name: "New name" });
      expectStatus(res, 200);
      expect(res.body.data).to.include({ name: "New name", slug: ws.slug, id: ws.id });
      expect(res.body.data.updated_at).to.be.a("string");
      const slugged = await h.api.patch(path(ws.id), { slug: "new-name" });
      expect(slugged.body.data.slug).to.equal("new-name");
      expect((await h.api.get(path("new-name"))).body.data.id).to.equal(ws.id);
      // The old slug is free again.
      expectStatus(await h.api.post("/api/v1/workspaces", { name: "x", slug: ws.slug }), 201);
    });

    it("answers 409 when renaming onto a taken slug, 400 on bad input", async () => {
      const a = await createWorkspace(h.api);
      const b = await createWorkspace(h.api);
      expectError(await h.api.patch(path(b.id), { slug: a.slug }), 409, /slug/);
      expectError(await h.api.patch(path(b.id), {}), 400, /empty/);
      expectError(await h.api.patch(path(b.id), { name: "" }), 400, /name/);
      expectError(await h.api.patch(path(b.id), { is_default: true }), 400, /is_default/);
      expect((await h.api.get(path(b.id))).body.data).to.deep.equal(b);
    });
  });

  describe("DELETE /workspaces/{id}", () => {
    it("deletes the workspace with its guardrails, keys and assignments", async () => {
      const ws = await createWorkspace(h.api, { name: "Doomed" });
      const g = await createGuardrail(h.api, { workspace_id: ws.id });
      const { data: key, secret } = await createKey(h.api, { workspace_id: ws.id });
      expectStatus(
        await h.api.post(`/api/v1/guardrails/${g.id}/assignments/keys`, { key_hashes: [key.hash] }),
        200,
      );
      expectStatus(
        await h.api.post(`/api/v1/guardrails/${g.id}/assignments/members`, {
          member_user_ids: ["doomed-user"],
        }),
        200,
      );
      expectStatus(
        await h.api.patch(`/api/v1/guardrails/${ws.default_guardrail_id}`, { description: "d" }),
        200,
      );
      expectStatus(await h.api.withKey(secret).get("/api/v1/key"), 200);
      // Its keys are disabled first: a workspace with enabled keys cannot be deleted.
      expectStatus(await h.api.patch(`/api/v1/keys/${key.hash}`, { disabled: true }), 200);

      const res = await h.api.delete(path(ws.id));
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ deleted: true });

      expectError(await h.api.get(path(ws.id)), 404);
      expectError(await h.api.get(path(ws.slug)), 404);
      expectError(await h.api.get(`/api/v1/guardrails/${g.id}`), 404);
      expectError(await h.api.get(`/api/v1/guardrails/${ws.default_guardrail_id}`), 404);
      expectError(await h.api.get(`/api/v1/keys/${key.hash}`), 404);
      expectError(await h.api.withKey(secret).get("/api/v1/key"), 401);

      const guardrails = (await h.api.get("/api/v1/guardrails?limit=100")).body.data;
      expect(guardrails.map((x: { id: string }) => x.id)).not.to.include(g.id);
      const keys = (await h.api.get("/api/v1/keys?limit=100&include_disabled=true")).body.data;
      expect(keys.map((x: { hash: string }) => x.hash)).not.to.include(key.hash);
      const ka = (await h.api.get("/api/v1/guardrails/assignments/keys?limit=100")).body.data;
      expect(ka.map((x: { key_hash: string }) => x.key_hash)).not.to.include(key.hash);
      const ma = (await h.api.get("/api/v1/guardrails/assignments/members?limit=100")).body.data;
      expect(ma.map((x: { user_id: string }) => x.user_id)).not.to.include("doomed-user");
      const list = (await h.api.get("/api/v1/workspaces?limit=100")).body.data;
      expect(list.map((x: { id: string }) => x.id)).not.to.include(ws.id);

      // Its slug can be used again.
      expectStatus(await h.api.post("/api/v1/workspaces", { name: "Doomed" }), 201);
    });

    it("refuses (409) to delete a workspace with enabled keys, naming the rule, and deletes nothing", async () => {
      const ws = await createWorkspace(h.api);
      const g = await createGuardrail(h.api, { workspace_id: ws.id });
      const one = await createKey(h.api, { workspace_id: ws.id });
      const two = await createKey(h.api, { workspace_id: ws.id });
      expectError(
        await h.api.delete(path(ws.id)),
        409,
        /has 2 active API key\(s\): a workspace with active \(enabled\) keys cannot be deleted/,
      );
      // Disabling one is not enough.
      expectStatus(await h.api.patch(`/api/v1/keys/${one.data.hash}`, { disabled: true }), 200);
      expectError(await h.api.delete(path(ws.slug)), 409, /has 1 active API key/);
      expectStatus(await h.api.get(path(ws.id)), 200);
      expectStatus(await h.api.get(`/api/v1/guardrails/${g.id}`), 200);
      expectStatus(await h.api.withKey(two.secret).get("/api/v1/key"), 200);
      // Deleting the last enabled key lifts the refusal.
      expectStatus(await h.api.delete(`/api/v1/keys/${two.data.hash}`), 200);
      expectStatus(await h.api.delete(path(ws.id)), 200);
      expectError(await h.api.get(`/api/v1/keys/${one.data.hash}`), 404);
    });

    it("leaves other workspaces alone", async () => {
      const keep = await createWorkspace(h.api);
      const g = await createGuardrail(h.api, { workspace_id: keep.id });
      const { secret } = await createKey(h.api, { workspace_id: keep.id });
      const doomed = await createWorkspace(h.api);
      expectStatus(await h.api.delete(path(doomed.id)), 200);
      expectStatus(await h.api.get(`/api/v1/guardrails/${g.id}`), 200);
      expectStatus(await h.api.withKey(secret).get("/api/v1/key"), 200);
    });
  });
});
