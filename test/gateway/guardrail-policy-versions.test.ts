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

const BASE = "/api/v1/guardrails/policies";

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
  describe(`gateway: guardrail policy versions, restore and checks (${kind} database)`, () => {
    let redis: LaneStore;
    let database: TestDatabase;
    let system: RunningSystem;
    let api: Api;
    /** Each test's policies live in a workspace of their own (a type moves per workspace). */
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
        name: `P ${randomUUID()}`,
        policy_type: type,
        config,
        workspace_id: workspaceId,
        ...more,
      };
      return (await ok("POST", `${BASE}/${type}`, body)).data;
    }

    async function audit(id: string, action: string): Promise<Json[]> {
      const body = await pollUntil(
        () => ok("GET", `/api/v1/audit-log?resource_id=${id}&action=${action}`),
        (b: Json) => b.data.length > 0,
      );
      return body.data;
    }

    /** A 409 of failing checks: the message names each, and error.metadata lists them. */
    function expectChecksFailed(res: JsonResponse, message: RegExp): string[] {
      expect(res.status, JSON.stringify(res.body)).to.equal(409);
      expect(res.body.error.message).to.match(message);
      return res.body.error.metadata.failing_checks;
    }

    it("numbers every create and replace, newest first, with who, when, what changed and the snapshot", async () => {
      const p = await created("model_availability", { allowed_models: ["railgate/espeak-ng"] });
      const path = `${BASE}/model_availability/${p.id}`;
      await ok("PUT", path, { name: "second", config: { allowed_models: ["openai/tts-1"] } });
      await ok("PUT", path, { name: "third", config: { allowed_models: ["openai/tts-1"] } });
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(3);
      expect(list.data.map((v: Json) => [v.version, v.action])).to.deep.equal([
        [3, "guardrail_policy.update"],
        [2, "guardrail_policy.update"],
        [1, "guardrail_policy.create"],
      ]);
      const [third, second] = list.data;
      expect(third.changes).to.deep.equal({ name: { before: "second", after: "third" } });
      expect(second.changes.config).to.deep.equal({
        before: { allowed_models: ["railgate/espeak-ng"] },
        after: { allowed_models: ["openai/tts-1"] },
      });
      expect(third).to.include({ policy_id: p.id, policy_type: "model_availability" });
      expect(third.actor.key_hash).to.match(/^[0-9a-f]{64}$/);
      expect(Date.parse(third.created_at)).to.be.at.least(Date.parse(p.updated_at));
      expect(third).to.not.have.property("policy");
      const paged = await ok("GET", `${path}/versions?offset=1&limit=1`);
      expect(paged.data.map((v: Json) => v.version)).to.deep.equal([2]);
      expect(paged.total_count).to.equal(3);
      const one = (await ok("GET", `${path}/versions/1`)).data;
      expect(one.policy.name).to.equal(p.name);
      expect(one.policy.config).to.deep.equal({ allowed_models: ["railgate/espeak-ng"] });
      expect(one).to.include({ forced: false, restored_from: null, deleted_at: null });
    });

    it("makes no version of an assignment change (the audit log has it)", async () => {
      const p = await created("moderation", REDACT_CARDS);
      const state = { opted_out: false, policy_ids: [], workspace_default_policy_ids: [] };
      expect(
        (
          await ok("PUT", `${BASE}/assignments/members/${randomUUID()}`, {
            assigned: true,
            expected_assignment: state,
            policy_id: p.id,
            policy_type: "moderation",
            workspace_id: workspaceId,
          })
        ).data,
      ).to.equal(true);
      await audit(p.id, "guardrail_policy.assign");
      expect((await ok("GET", `${BASE}/moderation/${p.id}/versions`)).total_count).to.equal(1);
    });

    it("restores a version's name, config and checks as a new version, audited, once per Idempotency-Key", async () => {
      const key = (await ok("POST", "/api/v1/keys", { name: "k", workspace_id: workspaceId })).data;
      const p = await created("model_availability", EU_ONLY, { checks: [EU_ENGINE] });
      const path = `${BASE}/model_availability/${p.id}`;
      await ok("PUT", path, {
        name: "wider",
        config: { allowed_data_regions: ["europe", "us"] },
        checks: null,
        api_key_hashes: [key.hash],
        member_ids: [],
      });
      const headers = { "idempotency-key": randomUUID() };
      const first = await api.request("POST", `${path}/versions/1/restore`, undefined, {
        headers,
      });
      expectStatus(first, 200);
      expect(first.body.data.name).to.equal(p.name);
      expect(first.body.data.config).to.deep.equal(EU_ONLY);
      expect(first.body.data.checks).to.have.length(1);
      expect(first.body.data.last_check_run.passed).to.equal(true);
      // Who the policy governs is not part of what a restore sets back.
      expect(first.body.data.api_key_hashes).to.deep.equal([key.hash]);
      const again = await api.request("POST", `${path}/versions/1/restore`, undefined, {
        headers,
      });
      expectStatus(again, 200);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(3);
      const restored = list.data[0];
      expect(restored).to.include({
        action: "guardrail_policy.restore",
        restored_from: 1,
        forced: false,
      });
      expect(restored.changes.name).to.deep.equal({ before: "wider", after: p.name });
      expect(restored.changes.checks.after[0].name).to.equal(EU_ENGINE.name);
      expect(restored.changes).to.not.have.property("api_key_hashes");
      const [event] = await audit(p.id, "guardrail_policy.restore");
      expect(event.changes.restored_from_version).to.deep.equal({ before: null, after: 1 });
      expect(event.resource.type).to.equal("guardrail_policy");
    });

    it("runs the checks on a replace: a failing one refuses it with 409 naming it, unless forced", async () => {
      const p = await created("model_availability", EU_ONLY, { checks: [EU_ENGINE] });
      expect(p.last_check_run.passed).to.equal(true);
      expect(p.last_check_run.results[0].outcome).to.equal("allowed");
      const path = `${BASE}/model_availability/${p.id}`;
      const change = { name: p.name, config: { allowed_data_regions: ["us"] } };
      const failing = expectChecksFailed(
        await api.request("PUT", path, change),
        /an EU key may use the embedded engine: expected allowed, got refused/,
      );
      expect(failing).to.have.length(1);
      expect((await ok("GET", path)).data.config).to.deep.equal(EU_ONLY);
      expect((await ok("GET", `${path}/versions`)).total_count).to.equal(1);
      const forced = (await ok("PUT", path, { ...change, force: true })).data;
      expect(forced.config).to.deep.equal({ allowed_data_regions: ["us"] });
      expect(forced.last_check_run).to.include({ forced: true, passed: false });
      const [event] = await audit(p.id, "guardrail_policy.update");
      expect(event.changes.forced).to.deep.equal({ before: null, after: true });
      expect(event.changes.failing_checks.after[0]).to.match(/^an EU key may use/);
      const list = await ok("GET", `${path}/versions`);
      expect(list.data[0].forced).to.equal(true);
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
    });

    it("decides a moderation policy's checks by its filters alone, on demand too", async () => {
      const p = await created("moderation", REDACT_CARDS, { checks: [CARD_REDACTED] });
      expect(p.last_check_run.results[0]).to.include({ outcome: "redacted", passed: true });
      const path = `${BASE}/moderation/${p.id}`;
      expectChecksFailed(
        await api.request("PUT", path, { name: p.name, config: BLOCK_CARDS }),
        /a card number is redacted: expected redacted, got refused/,
      );
      const run = (await ok("POST", `${path}/checks/run`)).data;
      expect(run.passed).to.equal(true);
      expect((await ok("GET", path)).data.last_check_run.ran_at).to.equal(run.ran_at);
      const [event] = await audit(p.id, "guardrail_policy.checks_run");
      expect(event.changes.last_check_run.after.passed).to.equal(true);
      // Running checks changes no rule: no new version.
      expect((await ok("GET", `${path}/versions`)).total_count).to.equal(1);
    });

    it("keeps a deleted policy's versions readable and refuses to restore it", async () => {
      const p = await created("budget", { limit_usd: 5, reset_interval: "daily" });
      const path = `${BASE}/budget/${p.id}`;
      await ok("DELETE", path);
      const list = await ok("GET", `${path}/versions`);
      expect(list.total_count).to.equal(1);
      expect(list.data[0].deleted_at).to.be.a("string");
      expect((await ok("GET", `${path}/versions/1`)).data.policy.config.limit_usd).to.equal(5);
      expectError(await api.post(`${path}/versions/1/restore`), 404, /budget policy .* not found/);
    });

    it("gives a mapped policy the guardrail's history: 400 naming the guardrail's routes", async () => {
      const g = (
        await ok("POST", "/api/v1/guardrails", {
          name: `G ${randomUUID()}`,
          workspace_id: workspaceId,
          limit_usd: 3,
          reset_interval: "daily",
          allowed_models: ["railgate/espeak-ng"],
        })
      ).data;
      const path = `${BASE}/budget/${g.id}`;
      expect((await ok("GET", path)).data.is_legacy_mapped).to.equal(true);
      for (const res of [
        await api.get(`${path}/versions`),
        await api.get(`${path}/versions/1`),
        await api.post(`${path}/versions/1/restore`),
        await api.post(`${BASE}/model_availability/${g.id}/checks/run`),
      ]) {
        expectError(res, 400, new RegExp(`mapped from guardrail ${g.id}.*/api/v1/guardrails/`));
      }
      // A replace takes the type over: the policy's history starts with the takeover's create.
      await ok("PUT", path, { name: g.name, config: { limit_usd: 4, reset_interval: "daily" } });
      const list = await ok("GET", `${path}/versions`);
      expect(list.data.map((v: Json) => v.action)).to.deep.equal([
        "guardrail_policy.update",
        "guardrail_policy.create",
      ]);
      expect(list.data[0].changes.config.after.limit_usd).to.equal(4);
    });

    describe("refusals", () => {
      it("answers 404 for an unknown policy or version", async () => {
        const unknown = randomUUID();
        const path = `${BASE}/moderation/${unknown}`;
        expectError(await api.get(`${path}/versions`), 404, /moderation policy .* not found/);
        expectError(await api.get(`${path}/versions/1`), 404, /not found/);
        expectError(await api.post(`${path}/versions/1/restore`), 404, /not found/);
        expectError(await api.post(`${path}/checks/run`), 404, /not found/);
        const p = await created("moderation", REDACT_CARDS);
        const own = `${BASE}/moderation/${p.id}`;
        expectError(
          await api.get(`${own}/versions/7`),
          404,
          /has no version 7 \(its versions are 1 to 1\)/,
        );
        expectError(await api.post(`${own}/versions/7/restore`), 404, /has no version 7/);
        // A policy of another type is not this one.
        expectError(await api.get(`${BASE}/budget/${p.id}/versions`), 404, /not found/);
      });

      it("answers 400 naming the field for a bad body, version or check", async () => {
        const p = await created("moderation", REDACT_CARDS);
        const b = await created("budget", { limit_usd: 1, reset_interval: "daily" });
        const path = `${BASE}/moderation/${p.id}`;
        const put = (body: object) =>
          api.request("PUT", path, { name: "n", config: REDACT_CARDS, ...body });
        const cases: [Promise<JsonResponse>, RegExp][] = [
          [api.get(`${path}/versions/0`), /version must be a whole number from 1/],
          [api.get(`${path}/versions/x`), /version must be a whole number from 1/],
          [api.get(`${path}/versions?limit=0`), /limit/],
          [api.post(`${path}/versions/1/restore`, { force: "yes" }), /force must be true or false/],
          [api.post(`${path}/versions/1/restore`, { other: 1 }), /Unknown field "other"/],
          [api.post(`${path}/checks/run`, { now: true }), /Unknown field "now"/],
          [put({ force: 1 }), /force must be true or false/],
          [put({ checks: [{ name: "x", expect: "allowed" }] }), /checks\[0\]\.request is required/],
          [
            put({ checks: [{ name: "x", request: { model: "m" }, expect: "maybe" }] }),
            /checks\[0\]\.expect/,
          ],
          [
            put({
              checks: [
                { name: "a", request: { model: "m" }, expect: "allowed" },
                { name: "a", request: { model: "m" }, expect: "allowed" },
              ],
            }),
            /checks\[1\]\.name "a" appears more than once/,
          ],
          [
            put({
              checks: [{ name: "a", request: { model: "m" }, expect: "allowed", reason: "x" }],
            }),
            /checks\[0\]\.reason is only taken with expect "refused"/,
          ],
          [
            api.request("PUT", `${BASE}/budget/${b.id}`, {
              name: "b",
              config: { limit_usd: 1, reset_interval: "daily" },
              checks: [{ name: "a", request: { model: "m" }, expect: "allowed" }],
            }),
            /checks are not available on budget policies/,
          ],
        ];
        for (const [call, message] of cases) expectError(await call, 400, message);
        // A budget policy has no checks to run: there is no such route.
        expectError(await api.post(`${BASE}/budget/${b.id}/checks/run`), 404, /No route/);
      });
    });
  });
}
