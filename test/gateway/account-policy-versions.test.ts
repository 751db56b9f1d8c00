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

/** A check the embedded engine passes from Europe only while europe is an allowed region. */
const EU_ENGINE = {
  name: "an EU key may use the embedded engine",
  request: { model: "railgate/espeak-ng", region: "europe" },
  expect: "allowed",
};
const CARD_REDACTED = {
  name: "a card number is redacted",
  request: { model: "railgate/espeak-ng", input: "pay with 4111 1111 1111 1111 today" },
  expect: "redacted",
};
const EU_ONLY = { allowed_data_regions: ["europe"] };
const REDACT_CARDS = { content_filter_builtins: [{ slug: "credit-card", action: "redact" }] };
const BLOCK_CARDS = { content_filter_builtins: [{ slug: "credit-card", action: "block" }] };

for (const kind of LANE_DATABASES) {
  describe(`gateway: workspace-wide policy versions, restore and checks (${kind} database)`, () => {
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

    /** A 409 of failing checks: the message names each, and error.metadata lists them. */
    function expectChecksFailed(res: JsonResponse, message: RegExp): string[] {
      expect(res.status, JSON.stringify(res.body)).to.equal(409);
      expect(res.body.error.message).to.match(message);
      return res.body.error.metadata.failing_checks;
    }

    it("runs the checks on a replace and a restore: 409 naming the failing one, unless forced", async () => {
      const p = await created("model_availability", EU_ONLY, { checks: [EU_ENGINE] });
      expect(p.checks).to.have.length(1);
      expect(p.last_check_run.passed).to.equal(true);
      expect(p.last_check_run.results[0].outcome).to.equal("allowed");
      const path = `${BASE}/${p.id}`;
      const change = { name: p.name, config: { allowed_data_regions: ["us"] } };
      const failing = expectChecksFailed(
        await api.request("PUT", path, change),
        /an EU key may use the embedded engine: expected allowed, got refused/,
      );
      expect(failing).to.have.length(1);
      const stored = (await ok("GET", BASE)).data.find((x: Json) => x.id === p.id);
      expect(stored.config).to.deep.equal(EU_ONLY);
      expect((await ok("GET", `${path}/versions`)).total_count).to.equal(1);
      const forced = (await ok("PUT", path, { ...change, force: true })).data;
      expect(forced.config).to.deep.equal({ allowed_data_regions: ["us"] });
      expect(forced.checks).to.have.length(1);
      expect(forced.last_check_run).to.include({ forced: true, passed: false });
      const [event] = await audit(p.id, "guardrail_policy.update");
      expect(event.changes.forced).to.deep.equal({ before: null, after: true });
      expect(event.changes.failing_checks.after[0]).to.match(/^an EU key may use/);
      const list = await ok("GET", `${path}/versions`);
      expect(list.data[0]).to.include({ version: 2, forced: true });
      expect(list.data[0].changes).to.not.have.property("forced");
      // Restoring version 2 (forced, failing) is refused in turn, and forced through.
      expectChecksFailed(
        await api.post(`${path}/versions/2/restore`, {}),
        /expected allowed, got refused/,
      );
      const again = (await ok("POST", `${path}/versions/2/restore`, { force: true })).data;
      expect(again.last_check_run.forced).to.equal(true);
      expect((await ok("GET", `${path}/versions`)).data[0]).to.include({
        action: "guardrail_policy.restore",
        forced: true,
        restored_from: 2,
      });
      // Version 1's checks pass on version 1's config: no force needed.
      const back = (await ok("POST", `${path}/versions/1/restore`)).data;
      expect(back.config).to.deep.equal(EU_ONLY);
      expect(back.last_check_run).to.include({ forced: false, passed: true });
    });

    it("decides a moderation policy's checks by its filters alone, on demand too", async () => {
      const p = await created("moderation", REDACT_CARDS, { checks: [CARD_REDACTED] });
      expect(p.last_check_run.results[0]).to.include({ outcome: "redacted", passed: true });
      const path = `${BASE}/${p.id}`;
      expectChecksFailed(
        await api.request("PUT", path, { name: p.name, config: BLOCK_CARDS }),
        /a card number is redacted: expected redacted, got refused/,
      );
      // Checks left out of a PUT keep the stored ones; null removes them.
      const kept = (await ok("PUT", path, { name: "renamed", config: REDACT_CARDS })).data;
      expect(kept.checks).to.have.length(1);
      const run = (await ok("POST", `${path}/checks/run`)).data;
      expect(run.passed).to.equal(true);
      const listed = (await ok("GET", BASE)).data.find((x: Json) => x.id === p.id);
      expect(listed.last_check_run.ran_at).to.equal(run.ran_at);
      const [event] = await audit(p.id, "guardrail_policy.checks_run");
      expect(event.changes.last_check_run.after.passed).to.equal(true);
      // Running checks changes no rule: no new version.
      expect((await ok("GET", `${path}/versions`)).total_count).to.equal(2);
      const removed = (
        await ok("PUT", path, { name: "no checks", config: BLOCK_CARDS, checks: null })
      ).data;
      expect(removed).to.include({ checks: null, last_check_run: null });
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
          [api.post(`${path}/checks/run`, { now: true }), /Unknown field "now"/],
        ];
        for (const [call, message] of cases) expectError(await call, 400, message);
      });

      it("answers 400 for bad checks, checks on a budget policy, and a bad force", async () => {
        const m = await created("moderation", REDACT_CARDS);
        const b = await created("budget", { limit_usd: 1, reset_interval: "daily" });
        const put = (body: object) =>
          api.request("PUT", `${BASE}/${m.id}`, { name: "n", config: REDACT_CARDS, ...body });
        const budgetConfig = { limit_usd: 1, reset_interval: "daily" };
        const aCheck = [{ name: "a", request: { model: "m" }, expect: "allowed" }];
        const cases: [Promise<JsonResponse>, RegExp][] = [
          [put({ force: 1 }), /force must be true or false/],
          [put({ checks: [{ name: "x", expect: "allowed" }] }), /checks\[0\]\.request is required/],
          [
            put({ checks: [{ name: "x", request: { model: "m" }, expect: "maybe" }] }),
            /checks\[0\]\.expect/,
          ],
          [put({ checks: "none" }), /checks/],
          [
            api.request("PUT", `${BASE}/${b.id}`, {
              name: "b",
              config: budgetConfig,
              checks: aCheck,
            }),
            /checks are not available on budget policies/,
          ],
          [
            api.post(BASE, {
              name: "b2",
              policy_type: "budget",
              config: budgetConfig,
              checks: aCheck,
            }),
            /checks are not available on budget policies/,
          ],
          [api.post(`${BASE}/${b.id}/checks/run`), /checks are not available on budget policies/],
        ];
        for (const [call, message] of cases) expectError(await call, 400, message);
        expectError(await api.post(`${BASE}/${randomUUID()}/checks/run`), 404, /account policy/);
      });
    });
  });
}
