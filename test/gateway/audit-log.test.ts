import { createHash } from "node:crypto";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api } from "../kit/http.js";
import { LANE_DATABASES, type LaneStore, startLaneStore } from "../kit/lane.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

// biome-ignore lint/suspicious/noExplicitAny: audit JSON
type Json = any;

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const ADMIN_HASH = sha256(MANAGEMENT_KEY);

for (const kind of LANE_DATABASES) {
  describe(`gateway: GET /api/v1/audit-log (${kind} database)`, () => {
    let redis: LaneStore;
    let database: TestDatabase;
    let system: RunningSystem;
    let api: Api;

    before(async function () {
      this.timeout(120_000);
      redis = await startLaneStore();
      database = await createTestDatabase(kind);
      system = await startTestSystem(redis.url, {}, { database: database.db });
      api = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    });

    after(async () => {
      await system?.close();
      await database?.dispose();
      await redis?.stop();
    });

    /** Calls with an X-Request-Id of the test's own, expecting a success. */
    async function call(method: string, path: string, body: unknown, requestId: string) {
      const res = await api.request(method, path, body, { headers: { "x-request-id": requestId } });
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.lessThan(300);
      return res.body;
    }

    async function audit(query: string): Promise<{ data: Json[]; next_cursor: string | null }> {
      const res = await api.get(`/api/v1/audit-log?${query}`);
      expectStatus(res, 200);
      return res.body;
    }

    it("records every management write with its actor, request id and only the changed fields", async () => {
      const ws = (await call("POST", "/api/v1/workspaces", { name: "Audited" }, "req-1")).data;
      await call("PATCH", `/api/v1/workspaces/${ws.id}`, { name: "Audited team" }, "req-2");
      const created = await call(
        "POST",
        "/api/v1/keys",
        { name: "app", workspace_id: ws.id, limit: 5 },
        "req-3",
      );
      const hash = created.data.hash;
      await call(
        "PATCH",
        `/api/v1/keys/${hash}`,
        { disabled: true, limit_reset: "daily" },
        "req-4",
      );
      await call("PATCH", `/api/v1/keys/${hash}`, { disabled: false }, "req-4b");
      const g = (
        await call(
          "POST",
          "/api/v1/guardrails",
          {
            name: "EU",
            workspace_id: ws.id,
            allowed_data_regions: ["europe"],
            limit_usd: 5,
            reset_interval: "daily",
          },
          "req-5",
        )
      ).data;
      await call("PATCH", `/api/v1/guardrails/${g.id}`, { limit_usd: 10 }, "req-6");
      const assign = `/api/v1/guardrails/${g.id}/assignments`;
      await call("POST", `${assign}/keys`, { key_hashes: [hash] }, "req-7");
      await call("POST", `${assign}/members`, { member_user_ids: ["user_1"] }, "req-8");
      await call("POST", `${assign}/keys/remove`, { key_hashes: [hash] }, "req-9");
      await call("POST", `/api/v1/workspaces/${ws.id}/credits`, { amount_usd: 10 }, "req-10");
      await call("POST", `/api/v1/workspaces/${ws.id}/credits`, { amount_usd: 5 }, "req-11");
      await call("DELETE", `/api/v1/guardrails/${g.id}`, undefined, "req-12");
      await call("DELETE", `/api/v1/keys/${hash}`, undefined, "req-13");
      await call("DELETE", `/api/v1/workspaces/${ws.id}`, undefined, "req-14");

      const { data, next_cursor } = await audit(`workspace_id=${ws.id}&limit=100`);
      expect(next_cursor).to.equal(null);
      const events = [...data].reverse();
      expect(events.map((e) => [e.action, e.request_id])).to.deep.equal([
        ["workspace.create", "req-1"],
        ["workspace.update", "req-2"],
        ["key.create", "req-3"],
        ["key.update", "req-4"],
        ["key.update", "req-4b"],
        ["guardrail.create", "req-5"],
        ["guardrail.update", "req-6"],
        ["assignment.create", "req-7"],
        ["assignment.create", "req-8"],
        ["assignment.delete", "req-9"],
        ["credits.add", "req-10"],
        ["credits.add", "req-11"],
        ["guardrail.delete", "req-12"],
        ["key.delete", "req-13"],
        ["workspace.delete", "req-14"],
      ]);
      const byRequest = Object.fromEntries(events.map((e) => [e.request_id, e]));
      for (const e of events) {
        expect(e.actor).to.deep.equal({
          key_hash: ADMIN_HASH,
          label: e.actor.label,
          name: e.actor.name,
        });
        expect(e.workspace_id).to.equal(ws.id);
        expect(Date.parse(e.at)).to.be.closeTo(Date.now(), 120_000);
      }
      expect(byRequest["req-1"].resource).to.deep.equal({
        type: "workspace",
        id: ws.id,
        label: "Audited",
      });
      expect(byRequest["req-2"].changes).to.deep.equal({
        name: { before: "Audited", after: "Audited team" },
      });
      // A key's secret is never in the log: only its hash (the resource id) and its fields.
      expect(JSON.stringify(events)).not.to.include(created.key);
      expect(byRequest["req-3"].resource).to.deep.equal({ type: "key", id: hash, label: "app" });
      expect(byRequest["req-3"].changes).to.deep.include({
        name: { before: null, after: "app" },
        limit: { before: null, after: 5 },
        disabled: { before: null, after: false },
      });
      expect(byRequest["req-4"].changes).to.deep.equal({
        disabled: { before: false, after: true },
        limit_reset: { before: null, after: "daily" },
      });
      expect(byRequest["req-5"].changes).to.deep.include({
        name: { before: null, after: "EU" },
        allowed_data_regions: { before: null, after: ["europe"] },
        limit_usd: { before: null, after: 5 },
        reset_interval: { before: null, after: "daily" },
      });
      expect(byRequest["req-6"].changes).to.deep.equal({ limit_usd: { before: 5, after: 10 } });
      expect(byRequest["req-7"]).to.deep.include({
        resource: { type: "assignment", id: g.id, label: "EU" },
        changes: { key_hashes: { before: null, after: [hash] } },
      });
      expect(byRequest["req-8"].changes).to.deep.equal({
        member_user_ids: { before: null, after: ["user_1"] },
      });
      expect(byRequest["req-9"].changes).to.deep.equal({
        key_hashes: { before: [hash], after: null },
      });
      expect(byRequest["req-12"].changes.name).to.deep.equal({ before: "EU", after: null });
      expect(byRequest["req-14"].changes.name).to.deep.equal({
        before: "Audited team",
        after: null,
      });
    });

    it("keeps each credit top-up with its amount and the balance it left (the credit history)", async () => {
      const ws = (await call("POST", "/api/v1/workspaces", { name: "Credits" }, "c-0")).data;
      await call("POST", `/api/v1/workspaces/${ws.id}/credits`, { amount_usd: 25 }, "c-1");
      await call("POST", `/api/v1/workspaces/${ws.id}/credits`, { amount_usd: -5.5 }, "c-2");
      const { data } = await audit(`resource_type=credits&workspace_id=${ws.id}`);
      expect(data.map((e) => [e.action, e.resource, e.changes])).to.deep.equal([
        [
          "credits.add",
          { type: "credits", id: ws.id, label: "Credits" },
          {
            amount_usd: { before: null, after: -5.5 },
            balance_usd: { before: 25, after: 19.5 },
          },
        ],
        [
          "credits.add",
          { type: "credits", id: ws.id, label: "Credits" },
          // The first top-up meters the workspace: there was no balance before.
          { amount_usd: { before: null, after: 25 }, balance_usd: { before: null, after: 25 } },
        ],
      ]);
    });

    it("filters by action, resource, actor and time, and pages newest first with a cursor", async () => {
      const ws = (await call("POST", "/api/v1/workspaces", { name: "Filters" }, "f-0")).data;
      const key = await call("POST", "/api/v1/keys", { name: "k0", workspace_id: ws.id }, "f-1");
      for (let i = 1; i <= 5; i++)
        await call("PATCH", `/api/v1/keys/${key.data.hash}`, { name: `k${i}` }, `f-r${i}`);
      const renames = await audit(`action=key.update&resource_id=${key.data.hash}`);
      expect(renames.data.map((e) => e.changes.name.after)).to.deep.equal([
        "k5",
        "k4",
        "k3",
        "k2",
        "k1",
      ]);
      // Pages of 2: each event once, in the same order, and no cursor after the last.
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page = await audit(
          `resource_id=${key.data.hash}&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
        );
        seen.push(...page.data.map((e) => e.id));
        cursor = page.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(pages).to.equal(3);
      const all = await audit(`resource_id=${key.data.hash}`);
      expect(seen).to.deep.equal(all.data.map((e) => e.id));
      expect(seen).to.have.length(6);
      // Another management key's writes are its own.
      const other = await call("POST", "/api/v1/keys", { name: "ops", kind: "management" }, "f-2");
      const ops = api.withKey(other.key);
      expectStatus(await ops.post("/api/v1/workspaces", { name: "By ops" }), 201);
      const byOps = await audit(`actor=${other.data.hash}`);
      expect(byOps.data.map((e) => [e.action, e.actor])).to.deep.equal([
        ["workspace.create", { key_hash: other.data.hash, label: other.data.label, name: "ops" }],
      ]);
      // Time: nothing from tomorrow on; everything of this test since an hour ago.
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
      expect((await audit(`from=${tomorrow}`)).data).to.deep.equal([]);
      const hourAgo = new Date(Date.now() - 3_600_000).toISOString();
      const recent = await audit(`from=${hourAgo}&to=${tomorrow}&resource_id=${key.data.hash}`);
      expect(recent.data).to.have.length(6);
    });

    it("counts every match and searches actions, resources and actors by part of their text", async () => {
      const ws = (await call("POST", "/api/v1/workspaces", { name: "Counted" }, "c-0")).data;
      const name = `findme-${Math.random().toString(36).slice(2, 8)}`;
      const key = await call("POST", "/api/v1/keys", { name, workspace_id: ws.id }, "c-1");
      for (let i = 1; i <= 3; i++)
        await call("PATCH", `/api/v1/keys/${key.data.hash}`, { limit: i }, `c-r${i}`);
      const page = (await api.get(`/api/v1/audit-log?resource_id=${key.data.hash}&limit=2`)).body;
      expect(page.data).to.have.length(2);
      expect(page).to.include({ total_count: 4, total_count_is_estimate: false });
      // The key's name (its resource label) in another case, and part of an action.
      const byName = (await api.get(`/api/v1/audit-log?q=${name.toUpperCase()}`)).body;
      expect(byName.data.map((e: Json) => e.resource.id)).to.include(key.data.hash);
      expect(byName.total_count).to.equal(byName.data.length);
      const byAction = (await api.get(`/api/v1/audit-log?q=ey.upd&resource_id=${key.data.hash}`))
        .body;
      expect(byAction.total_count).to.equal(3);
      // LIKE's wildcards are searched for as themselves.
      expect((await api.get(`/api/v1/audit-log?q=%25%25&workspace_id=${ws.id}`)).body).to.include({
        total_count: 0,
      });
    });

    it("records nothing for a refused write", async () => {
      const ws = (await call("POST", "/api/v1/workspaces", { name: "Refusals" }, "r-0")).data;
      const before = (await audit(`workspace_id=${ws.id}`)).data.length;
      expectError(await api.post("/api/v1/keys", { name: "", workspace_id: ws.id }), 400);
      expectError(await api.post(`/api/v1/workspaces/${ws.id}/credits`, { amount_usd: 0 }), 400);
      expect((await audit(`workspace_id=${ws.id}`)).data).to.have.length(before);
    });

    it("refuses bad filters with 400 naming them", async () => {
      const cases: [string, RegExp][] = [
        ["limit=0", /limit must be an integer from 1 to 100/],
        ["limit=101", /limit must be an integer from 1 to 100/],
        ["limit=ten", /limit/],
        ["action=Key.Create", /action must be <resource>\.<verb>/],
        [`action=${"a".repeat(40)}.${"b".repeat(40)}`, /action/],
        ["resource_type=invoice", /resource_type must be one of "key"/],
        [`resource_id=${"x".repeat(257)}`, /resource_id must be at most 256/],
        ["actor=someone", /actor must be a key hash/],
        ["workspace_id=default", /workspace_id must be a workspace id/],
        ["from=yesterday", /from must be an ISO 8601 instant/],
        ["to=2026-13-45", /to must be an ISO 8601 instant/],
        ["to=2026-02-30", /to must be an ISO 8601 instant/],
        ["from=2026-11-02&to=2026-11-01", /from must be before to/],
        ["cursor=not-a-cursor", /cursor is not one this API returned/],
        ["cursor=%2B%2B", /cursor is not one this API returned/],
        ["sort=asc", /Unknown query parameter "sort"/],
        [`q=${"x".repeat(201)}`, /q must be at most 200 characters/],
      ];
      for (const [query, message] of cases) {
        expectError(await api.get(`/api/v1/audit-log?${query}`), 400, message);
      }
    });

    it("is for management keys only, and read-only (405 for any write)", async () => {
      const key = await call("POST", "/api/v1/keys", { name: "reader" }, "m-0");
      expectError(await api.withKey(key.key).get("/api/v1/audit-log"), 403);
      expectError(await api.withKey(undefined).get("/api/v1/audit-log"), 401);
      for (const method of ["POST", "PATCH", "PUT", "DELETE"]) {
        const res = await api.request(method, "/api/v1/audit-log", {});
        expect(res.status, method).to.equal(405);
        expect(res.headers.get("allow")).to.equal("GET");
      }
    });
  });
}
