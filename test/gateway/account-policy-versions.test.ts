import { randomUUID } from "node:crypto";
import { expect } from "chai";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import { createTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectError, expectStatus } from "../kit/expect.js";
import { Api, type JsonResponse } from "../kit/http.js";
import { LANE_DATABASES, type LaneStore, startLaneStore } from "../kit/lane.js";
import { pollUntil } from "../kit/poll.js";
import { MANAGEMENT_KEY, startTestSystem } from "../kit/system.js";

// biome-ignore lint/suspicious/noExplicitAny: API JSON
type Json = any;

const BASE = "/api/v1/guardrails/policies/account";

for (const kind of LANE_DATABASES) {
  describe(`gateway: workspace-wide policy versions and restore (${kind} database)`, () => {
    let redis: LaneStore;
    let database: TestDatabase;
    let system: RunningSystem;
    let api: Api;
    let workspaceId: string;

    before(async function () {
      this.timeout(120_000);
      redis = await startLaneStore();
      database = await createTestDatabase(kind);
      system = await startTestSystem(redis.url, {}, { database: database.db });
      api = new Api(`http://127.0.0.1:${system.gatewayPorts.global}`, MANAGEMENT_KEY);
    });

    beforeEach(async () => {
      workspaceId = (await ok("POST", "/api/v1/workspaces", { name: `W ${randomUUID()}` })).data.id;
    });

    after(async () => {
      await system?.close();
      await database?.dispose();
      await redis?.stop();
    });

    async function ok(method: string, path: string, body?: unknown): Promise<Json> {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.lessThan(300);
      return res.body;
    }

    async function created(type: string, config: unknown, more: object = {}): Promise<Json> {
      const body = {
        name: `A ${randomUUID()}`,
        policy_type: type,
        config,
        workspace_ids: [workspaceId],
        ...more,
      };
      return (await ok("POST", BASE, body)).data;
    }

    async function audit(id: string, action: string): Promise<Json[]> {
      const body = await pollUntil(
        () => ok("GET", `/api/v1/audit-log?resource_id=${id}&action=${action}`),
        (b: Json) => b.data.length > 0,
      );
      return body.data;
    }

    it("numbers every create and replace, newest first, with who, what changed and the snapshot", async () => {
      const p = await created("budget", { limit_usd: 10, reset_interval: "daily" });
      const path = `${BASE}/${p.id}`;
      await ok("PUT", path, { name: "second", config: { limit_usd: 20, reset_interval: "daily" } });
      await ok("PUT", path, { name: "third", config: { limit_usd: 20, reset_interval: "daily" } });
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(3);
      expect(list.data.map((v: Json) => [v.version, v.action])).to.deep.equal([
        [3, "guardrail_policy.update"],
        [2, "guardrail_policy.update"],
        [1, "guardrail_policy.create"],
      ]);
      const [third, second] = list.data;
      expect(third.changes).to.deep.equal({ name: { before: "second", after: "third" } });
      expect(second.changes.config.after.limit_usd).to.equal(20);
      // The policy's own type, not where the versions are kept.
      expect(third).to.include({ policy_id: p.id, policy_type: "budget" });
      expect(third.actor.key_hash).to.match(/^[0-9a-f]{64}$/);
      expect(third).to.not.have.property("policy");
      const paged = await ok("GET", `${path}/versions?offset=1&limit=1`);
      expect(paged.data.map((v: Json) => v.version)).to.deep.equal([2]);
      expect(paged.total_count).to.equal(3);
      const one = (await ok("GET", `${path}/versions/1`)).data;
      expect(one.policy).to.include({ id: p.id, name: p.name, policy_type: "budget" });
      expect(one.policy.config.limit_usd).to.equal(10);
      expect(one.policy.workspace_ids).to.deep.equal([workspaceId]);
      expect(one).to.include({ forced: false, restored_from: null, deleted_at: null });
    });

    it("restores a version's name and config as a new version, keeping coverage, audited once per Idempotency-Key", async () => {
      const other = (await ok("POST", "/api/v1/workspaces", { name: `W ${randomUUID()}` })).data;
      const p = await created("budget", { limit_usd: 10, reset_interval: "daily" });
      const path = `${BASE}/${p.id}`;
      await ok("PUT", path, {
        name: "wider",
        config: { limit_usd: 99, reset_interval: "monthly" },
        workspace_ids: [workspaceId, other.id],
      });
      const headers = { "idempotency-key": randomUUID() };
      const first = await api.request("POST", `${path}/versions/1/restore`, undefined, {
        headers,
      });
      expectStatus(first, 200);
      expect(first.body.data.name).to.equal(p.name);
      expect(first.body.data.config).to.deep.include({ limit_usd: 10, reset_interval: "daily" });
      // Which workspaces it covers is not part of what a restore sets back.
      expect(first.body.data.workspace_ids).to.deep.equal([workspaceId, other.id]);
      const again = await api.request("POST", `${path}/versions/1/restore`, undefined, {
        headers,
      });
      expectStatus(again, 200);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(3);
      expect(list.data[0]).to.include({
        action: "guardrail_policy.restore",
        restored_from: 1,
        forced: false,
      });
      expect(list.data[0].changes.name).to.deep.equal({ before: "wider", after: p.name });
      expect(list.data[0].changes).to.not.have.property("workspace_ids");
      const [event] = await audit(p.id, "guardrail_policy.restore");
      expect(event.changes.restored_from_version).to.deep.equal({ before: null, after: 1 });
      expect(event.resource.type).to.equal("guardrail_policy");
      const listed = (await ok("GET", BASE)).data.find((x: Json) => x.id === p.id);
      expect(listed.name).to.equal(p.name);
    });

    it("keeps a deleted policy's versions readable and refuses to restore it", async () => {
      const p = await created("budget", { limit_usd: 5, reset_interval: "daily" });
      const path = `${BASE}/${p.id}`;
      await ok("DELETE", path);
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(1);
      expect(list.data[0]).to.include({ policy_type: "budget" });
      expect(list.data[0].deleted_at).to.be.a("string");
      expect((await ok("GET", `${path}/versions/1`)).data.policy.config.limit_usd).to.equal(5);
      expectError(await api.post(`${path}/versions/1/restore`), 404, /account policy .* not found/);
    });

    describe("refusals", () => {
      it("answers 404 for an unknown policy or version, and keeps the two kinds apart", async () => {
        const unknown = `${BASE}/${randomUUID()}`;
        expectError(await api.get(`${unknown}/versions`), 404, /account policy .* not found/);
        expectError(await api.get(`${unknown}/versions/1`), 404, /not found/);
        expectError(await api.post(`${unknown}/versions/1/restore`), 404, /not found/);
        expectError(await api.get(`${BASE}/not-a-uuid/versions`), 404, /not found/);
        const p = await created("budget", { limit_usd: 1, reset_interval: "daily" });
        expectError(
          await api.get(`${BASE}/${p.id}/versions/7`),
          404,
          /account policy .* has no version 7 \(its versions are 1 to 1\)/,
        );
        expectError(await api.post(`${BASE}/${p.id}/versions/7/restore`), 404, /has no version 7/);
        // A workspace-wide policy is no workspace policy of its type, and the reverse.
        expectError(
          await api.get(`/api/v1/guardrails/policies/budget/${p.id}/versions`),
          404,
          /budget policy .* not found/,
        );
        const w = (
          await ok("POST", "/api/v1/guardrails/policies/budget", {
            name: "w",
            policy_type: "budget",
            config: { limit_usd: 1, reset_interval: "daily" },
            workspace_id: workspaceId,
          })
        ).data;
        expectError(await api.get(`${BASE}/${w.id}/versions`), 404, /account policy/);
      });

      it("answers 400 naming the field for a bad version or body", async () => {
        const p = await created("budget", { limit_usd: 1, reset_interval: "daily" });
        const path = `${BASE}/${p.id}`;
        const cases: [Promise<JsonResponse>, RegExp][] = [
          [api.get(`${path}/versions/0`), /version must be a whole number from 1/],
          [api.get(`${path}/versions/x`), /version must be a whole number from 1/],
          [api.get(`${path}/versions?limit=0`), /limit/],
          [api.get(`${path}/versions?page=2`), /page/],
          [api.post(`${path}/versions/1/restore`, { force: "yes" }), /force must be true or false/],
          [api.post(`${path}/versions/1/restore`, { other: 1 }), /Unknown field "other"/],
        ];
        for (const [call, message] of cases) expectError(await call, 400, message);
      });
    });
  });
}
