import { createHash } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createKey, createWorkspace, useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

describe("gateway: API keys", () => {
  const h = useSystem();
  const as = (secret: string) => h.api.withKey(secret);

  describe("POST /keys", () => {
    it("answers 201 with the secret once and its hash as the public id", async () => {
      const res = await h.api.post("/api/v1/keys", { name: "Speech app" });
      expectStatus(res, 201);
      expect(Object.keys(res.body).sort()).to.deep.equal(["data", "key"]);
      const { data, key } = res.body;
      expect(key).to.be.a("string").with.length.above(32);
      expect(data.hash).to.match(/^[0-9a-f]{64}$/);
      expect(data.hash).to.equal(sha256(key));
      expect(data).to.include({
        name: "Speech app",
        kind: "standard",
        disabled: false,
        workspace_id: h.system.defaultWorkspaceId,
        guardrail_id: null,
        limit: null,
        updated_at: null,
      });
      expect(data.created_at).to.be.a("string");
      expect(JSON.stringify(data)).not.to.include(key);
      expect(data.label).to.be.a("string");
      expect(data.label).not.to.equal(key);

      // Never shown again: not by GET, not in the list.
      const read = await h.api.get(`/api/v1/keys/${data.hash}`);
      expectStatus(read, 200);
      expect(Object.keys(read.body)).to.deep.equal(["data"]);
      expect(read.body.data).to.deep.equal(data);
      const list = await h.api.get("/api/v1/keys?limit=100");
      expect(JSON.stringify(list.body)).not.to.include(key);
      expect(list.body.data.map((k: { hash: string }) => k.hash)).to.include(data.hash);
    });

    it("gives every key its own secret", async () => {
      const a = await createKey(h.api);
      const b = await createKey(h.api);
      expect(a.secret).to.not.equal(b.secret);
      expect(a.data.hash).to.not.equal(b.data.hash);
    });

    it("creates a standard key in a named workspace, with an owner and a limit", async () => {
      const ws = await createWorkspace(h.api);
      const { data } = await createKey(h.api, {
        workspace_id: ws.id,
        member_user_id: "user-7",
        limit: 25,
      });
      expect(data).to.include({ workspace_id: ws.id, member_user_id: "user-7", limit: 25 });
    });

    it("validates the body", async () => {
      const post = (body: Record<string, unknown>) => h.api.post("/api/v1/keys", body);
      expectError(await post({}), 400, /name/);
      expectError(await post({ name: "" }), 400, /name/);
      expectError(await post({ name: "k", kind: "root" }), 400, /kind/);
      expectError(await post({ name: "k", limit: -1 }), 400, /limit/);
      expectError(await post({ name: "k", limit: "10" }), 400, /limit/);
      expectError(await post({ name: "k", secret: "mine" }), 400, /"secret"/);
      expectError(
        await post({ name: "k", workspace_id: "5f0c7a2e-0000-4000-8000-000000000000" }),
        400,
        /workspace_id/,
      );
      expectError(
        await post({ name: "k", kind: "management", workspace_id: h.system.defaultWorkspaceId }),
        400,
        /workspace_id/,
      );
    });
  });

  describe("OpenRouter's create-key fields", () => {
    it("creator_user_id names the owning member", async () => {
      const res = await h.api.post("/api/v1/keys", { name: "owned", creator_user_id: "user_7" });
      expectStatus(res, 201);
      expect(res.body.data).to.include({ member_user_id: "user_7", creator_user_id: "user_7" });
      const same = await h.api.post("/api/v1/keys", {
        name: "owned twice",
        creator_user_id: "user_7",
        member_user_id: "user_7",
      });
      expectStatus(same, 201);
    });

    it("takes limit_reset null and include_byok_in_limit false or true, and shows them back", async () => {
      const res = await h.api.post("/api/v1/keys", {
        name: "plain",
        limit: 3,
        limit_reset: null,
        include_byok_in_limit: false,
      });
      expectStatus(res, 201);
      expect(res.body.data).to.include({
        limit: 3,
        limit_reset: null,
        include_byok_in_limit: false,
      });
      const byok = await h.api.post("/api/v1/keys", { name: "byok", include_byok_in_limit: true });
      expectStatus(byok, 201);
      expect(byok.body.data.include_byok_in_limit).to.equal(true);
      const read = await h.api.get(`/api/v1/keys/${byok.body.data.hash}`);
      expect(read.body.data.include_byok_in_limit).to.equal(true);
      const patched = await h.api.patch(`/api/v1/keys/${byok.body.data.hash}`, {
        include_byok_in_limit: false,
      });
      expectStatus(patched, 200);
      expect(patched.body.data.include_byok_in_limit).to.equal(false);
    });

    it("refuses what it would not honour, naming the field", async () => {
      const post = (body: Record<string, unknown>) =>
        h.api.post("/api/v1/keys", { name: "k", ...body });
      expectError(await post({ limit_reset: "hourly" }), 400, /limit_reset must be "daily"/);
      expectError(await post({ include_byok_in_limit: 1 }), 400, /include_byok_in_limit/);
      expectError(
        await post({ creator_user_id: "a", member_user_id: "b" }),
        400,
        /creator_user_id and member_user_id/,
      );
      expectError(await post({ creator_user_id: 7 }), 400, /creator_user_id/);
    });
  });

  describe("using a key", () => {
    it("authenticates with the secret as a bearer token; GET /key describes the caller", async () => {
      const { data, secret } = await createKey(h.api, { name: "Caller" });
      const me = await as(secret).get("/api/v1/key");
      expectStatus(me, 200);
      // The same key...
      for (const field of ["hash", "name", "label", "kind", "workspace_id", "limit", "usage"]) {
        expect(me.body.data[field], field).to.deep.equal(data[field]);
      }
      // ...with what OpenRouter's GET /key adds about the caller.
      expect(me.body.data).to.include({
        is_management_key: false,
        is_provisioning_key: false,
        is_free_tier: false,
      });
      expect(me.body.data.allowed_data_regions).to.deep.equal(["global", "europe", "us"]);
      expect(me.body.data.rate_limit).to.include({ requests: 600, interval: "1m" });

      const mgmt = await h.api.get("/api/v1/key");
      expectStatus(mgmt, 200);
      expect(mgmt.body.data.kind).to.equal("management");
      expect(mgmt.body.data.hash).to.equal(sha256(MANAGEMENT_KEY));
    });

    it("forbids a standard key the management API (403)", async () => {
      const { secret } = await createKey(h.api);
      expectError(await as(secret).get("/api/v1/keys"), 403, /management key/);
      expectError(await as(secret).post("/api/v1/keys", { name: "escalate" }), 403);
      expectError(await as(secret).post("/api/v1/guardrails", { name: "nope" }), 403);
    });

    it("creates a management key (kind: management) that can manage", async () => {
      const { data, secret } = await createKey(h.api, { kind: "management" });
      expect(data.kind).to.equal("management");
      // The organization's, in no workspace: "" (OpenRouter's key shape has a string here).
      expect(data.workspace_id).to.equal("");
      const admin = as(secret);
      const g = await admin.post("/api/v1/guardrails", { name: "By a new admin" });
      expectStatus(g, 201);
      expectStatus(await admin.get(`/api/v1/guardrails/${g.body.data.id}`), 200);
      const k = await admin.post("/api/v1/keys", { name: "Made by the new admin" });
      expectStatus(k, 201);
      expectStatus(await admin.get("/api/v1/workspaces"), 200);
    });
  });

  describe("PATCH /keys/{hash}", () => {
    it("changes name, disabled and limit; omitted fields stay", async () => {
      const { data } = await createKey(h.api, { name: "Before", limit: 5 });
      const path = `/api/v1/keys/${data.hash}`;
      const a = await h.api.patch(path, { name: "After" });
      expectStatus(a, 200);
      expect(a.body.data).to.include({ name: "After", limit: 5, disabled: false });
      expect(a.body.data.updated_at).to.be.a("string");
      const b = await h.api.patch(path, { limit: 7.5 });
      expect(b.body.data).to.include({ name: "After", limit: 7.5 });
      const c = await h.api.patch(path, { limit: null });
      expect(c.body.data).to.include({ name: "After", limit: null });
      expect((await h.api.get(path)).body.data).to.include({ name: "After", limit: null });
    });

    it("a disabled key gets 401; enabled again, it works", async () => {
      const { data, secret } = await createKey(h.api);
      const path = `/api/v1/keys/${data.hash}`;
      expectStatus(await as(secret).get("/api/v1/key"), 200);
      const off = await h.api.patch(path, { disabled: true });
      expectStatus(off, 200);
      expect(off.body.data.disabled).to.equal(true);
      expectError(await as(secret).get("/api/v1/key"), 401, /disabled/);
      expectStatus(await h.api.patch(path, { disabled: false }), 200);
      expectStatus(await as(secret).get("/api/v1/key"), 200);
    });

    it("a disabled management key cannot manage", async () => {
      const { data, secret } = await createKey(h.api, { kind: "management" });
      expectStatus(await h.api.patch(`/api/v1/keys/${data.hash}`, { disabled: true }), 200);
      expectError(await as(secret).get("/api/v1/guardrails"), 401);
    });

    it("validates the body and the hash", async () => {
      const { data } = await createKey(h.api);
      const path = `/api/v1/keys/${data.hash}`;
      expectError(await h.api.patch(path, {}), 400, /empty/);
      expectError(await h.api.patch(path, { name: "" }), 400, /name/);
      expectError(await h.api.patch(path, { disabled: "yes" }), 400, /disabled/);
      expectError(await h.api.patch(path, { limit: -3 }), 400, /limit/);
      expectError(await h.api.patch(path, { kind: "management" }), 400, /"kind"/);
      expectError(await h.api.patch(`/api/v1/keys/${"0".repeat(64)}`, { name: "x" }), 404);
      expectError(await h.api.patch("/api/v1/keys/xyz", { name: "x" }), 400, /hash/);
      expect((await h.api.get(path)).body.data).to.deep.equal(data);
    });
  });

  describe("GET /keys", () => {
    it("hides disabled keys unless include_disabled=true, and filters by workspace", async () => {
      const ws = await createWorkspace(h.api);
      const on = (await createKey(h.api, { workspace_id: ws.id })).data;
      const off = (await createKey(h.api, { workspace_id: ws.id })).data;
      await h.api.patch(`/api/v1/keys/${off.hash}`, { disabled: true });

      const visible = await h.api.get(`/api/v1/keys?workspace_id=${ws.id}`);
      expectStatus(visible, 200);
      expect(visible.body.total_count).to.equal(1);
      expect(visible.body.data.map((k: { hash: string }) => k.hash)).to.deep.equal([on.hash]);
      const all = await h.api.get(`/api/v1/keys?workspace_id=${ws.id}&include_disabled=true`);
      expect(all.body.total_count).to.equal(2);
      expect(all.body.data.map((k: { hash: string }) => k.hash).sort()).to.deep.equal(
        [on.hash, off.hash].sort(),
      );
    });

    it("pages the enabled keys: pages cover each exactly once and total_count counts only them", async () => {
      const ws = await createWorkspace(h.api);
      const made = [];
      for (let i = 0; i < 7; i++) made.push((await createKey(h.api, { workspace_id: ws.id })).data);
      for (const k of [made[1], made[4], made[5]]) {
        await h.api.patch(`/api/v1/keys/${k.hash}`, { disabled: true });
      }
      const enabled = [made[0], made[2], made[3], made[6]].map((k) => k.hash).sort();
      const seen: string[] = [];
      for (let offset = 0; offset < 6; offset += 2) {
        const page = await h.api.get(`/api/v1/keys?workspace_id=${ws.id}&limit=2&offset=${offset}`);
        expectStatus(page, 200);
        expect(page.body.total_count).to.equal(4);
        seen.push(...page.body.data.map((k: { hash: string }) => k.hash));
      }
      expect(seen.sort()).to.deep.equal(enabled);
      // Enabling a key again brings it back into the pages.
      await h.api.patch(`/api/v1/keys/${made[4].hash}`, { disabled: false });
      const again = await h.api.get(`/api/v1/keys?workspace_id=${ws.id}&limit=100`);
      expect(again.body.total_count).to.equal(5);
    });

    it("rejects bad paging", async () => {
      for (const q of ["limit=0", "limit=101", "offset=-1", "offset=one"]) {
        expectError(await h.api.get(`/api/v1/keys?${q}`), 400);
      }
    });
  });

  describe("GET and DELETE /keys/{hash}", () => {
    it("answers 404 for an unknown hash and 400 for a malformed one", async () => {
      expectError(await h.api.get(`/api/v1/keys/${"a".repeat(64)}`), 404);
      expectError(await h.api.get("/api/v1/keys/ABC"), 400, /hash/);
      expectError(await h.api.delete(`/api/v1/keys/${"b".repeat(64)}`), 404);
    });

    it("deletes a key (200 { deleted: true }); its secret then gets 401", async () => {
      const { data, secret } = await createKey(h.api);
      expectStatus(await as(secret).get("/api/v1/key"), 200);
      const res = await h.api.delete(`/api/v1/keys/${data.hash}`);
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ deleted: true });
      expectError(await as(secret).get("/api/v1/key"), 401);
      expectError(await h.api.get(`/api/v1/keys/${data.hash}`), 404);
      expectError(await h.api.delete(`/api/v1/keys/${data.hash}`), 404);
    });

    it("deletes a management key; it can no longer manage", async () => {
      const { data, secret } = await createKey(h.api, { kind: "management" });
      expectStatus(await as(secret).get("/api/v1/guardrails"), 200);
      expectStatus(await h.api.delete(`/api/v1/keys/${data.hash}`), 200);
      expectError(await as(secret).get("/api/v1/guardrails"), 401);
    });
  });

  describe("GET /keys?q=", () => {
    it("searches names, labels and hashes in any case, paging the matches with their total", async () => {
      const ws = await createWorkspace(h.api);
      const tag = `Searchable${Math.random().toString(36).slice(2, 8)}`;
      const made = [];
      for (let i = 0; i < 3; i++)
        made.push(await createKey(h.api, { name: `${tag} ${i}`, workspace_id: ws.id }));
      await createKey(h.api, { name: "something else", workspace_id: ws.id });
      const page = await h.api.get(
        `/api/v1/keys?workspace_id=${ws.id}&q=${tag.toLowerCase()}&limit=2`,
      );
      expectStatus(page, 200);
      expect(page.body.total_count).to.equal(3);
      expect(page.body.data).to.have.length(2);
      const rest = await h.api.get(
        `/api/v1/keys?workspace_id=${ws.id}&q=${tag.toUpperCase()}&limit=2&offset=2`,
      );
      expect(rest.body.data).to.have.length(1);
      const names = [...page.body.data, ...rest.body.data].map((k: { name: string }) => k.name);
      expect(names.sort()).to.deep.equal([`${tag} 0`, `${tag} 1`, `${tag} 2`]);
      const first = made[0]?.data.hash as string;
      const byHash = await h.api.get(`/api/v1/keys?q=${first.slice(0, 16)}`);
      expect(byHash.body.data.map((k: { hash: string }) => k.hash)).to.deep.equal([first]);
      expectError(
        await h.api.get(`/api/v1/keys?q=${"x".repeat(201)}`),
        400,
        /^q must be at most 200/,
      );
    });
  });
});
