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

/** A 409 of failing checks: the message names each, and error.metadata lists them. */
function expectChecksFailed(res: JsonResponse, message: RegExp): string[] {
  expect(res.status, JSON.stringify(res.body)).to.equal(409);
  expect(res.body.error.code).to.equal(409);
  expect(res.body.error.message).to.match(message);
  return res.body.error.metadata.failing_checks;
}

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

for (const kind of LANE_DATABASES) {
  describe(`gateway: guardrail versions, restore and checks (${kind} database)`, () => {
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

    async function ok(method: string, path: string, body?: unknown): Promise<Json> {
      const res = await api.request(method, path, body);
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).to.be.lessThan(300);
      return res.body;
    }

    /** The versions once `n` of them are readable (a Redis store drains its outbox off the answer). */
    async function versions(id: string, n: number, query = ""): Promise<Json> {
      const body = await pollUntil(
        () => ok("GET", `/api/v1/guardrails/${id}/versions${query}`),
        (b: Json) => b.total_count >= n,
      );
      expect(body.total_count).to.equal(n);
      return body;
    }

    async function audit(id: string, action: string): Promise<Json[]> {
      const body = await pollUntil(
        () => ok("GET", `/api/v1/audit-log?resource_id=${id}&action=${action}`),
        (b: Json) => b.data.length > 0,
      );
      return body.data;
    }

    async function created(body: Record<string, unknown>): Promise<Json> {
      return (await ok("POST", "/api/v1/guardrails", { name: `G ${randomUUID()}`, ...body })).data;
    }

    it("numbers every create and change, newest first, with who, when, what changed and the snapshot", async () => {
      const g = await created({ description: "one" });
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, { description: "two" });
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, { allowed_models: ["railgate/espeak-ng"] });
      const list = await versions(g.id, 3);
      expect(list.data.map((v: Json) => v.version)).to.deep.equal([3, 2, 1]);
      expect(list.data.map((v: Json) => v.action)).to.deep.equal([
        "guardrail.update",
        "guardrail.update",
        "guardrail.create",
      ]);
      const [third, second] = list.data;
      expect(second.changes).to.deep.equal({ description: { before: "one", after: "two" } });
      expect(third.changes).to.deep.equal({
        allowed_models: { before: null, after: ["railgate/espeak-ng"] },
      });
      expect(third.actor.name).to.be.a("string");
      expect(third.actor.key_hash).to.match(/^[0-9a-f]{64}$/);
      expect(Date.parse(third.created_at)).to.be.at.least(Date.parse(g.created_at));
      expect(third).to.not.have.property("guardrail");
      const paged = await ok("GET", `/api/v1/guardrails/${g.id}/versions?offset=1&limit=1`);
      expect(paged.data.map((v: Json) => v.version)).to.deep.equal([2]);
      expect(paged.total_count).to.equal(3);
      const one = (await ok("GET", `/api/v1/guardrails/${g.id}/versions/2`)).data;
      expect(one.guardrail.description).to.equal("two");
      expect(one.guardrail.allowed_models).to.equal(null);
      expect(one.forced).to.equal(false);
      expect(one.restored_from).to.equal(null);
    });

    it("restores a version as a new one equal to it, audited, once per Idempotency-Key", async () => {
      const g = await created({ description: "first", allowed_data_regions: ["europe"] });
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, {
        description: "second",
        allowed_data_regions: null,
      });
      await versions(g.id, 2);
      const headers = { "idempotency-key": randomUUID() };
      const first = await api.request(
        "POST",
        `/api/v1/guardrails/${g.id}/versions/1/restore`,
        undefined,
        { headers },
      );
      expectStatus(first, 200);
      expect(first.body.data.description).to.equal("first");
      expect(first.body.data.allowed_data_regions).to.deep.equal(["europe"]);
      const again = await api.request(
        "POST",
        `/api/v1/guardrails/${g.id}/versions/1/restore`,
        undefined,
        { headers },
      );
      expectStatus(again, 200);
      expect(again.headers.get("idempotent-replayed")).to.equal("true");
      const list = await versions(g.id, 3);
      const restored = list.data[0];
      expect(restored.action).to.equal("guardrail.restore");
      expect(restored.restored_from).to.equal(1);
      expect(restored.changes).to.deep.equal({
        description: { before: "second", after: "first" },
        allowed_data_regions: { before: null, after: ["europe"] },
      });
      const [event] = await audit(g.id, "guardrail.restore");
      expect(event.changes.restored_from_version).to.deep.equal({ before: null, after: 1 });
      expect(event.changes.description).to.deep.equal({ before: "second", after: "first" });
    });

    it("runs the checks on a change: a failing one refuses it with 409 naming it, unless forced", async () => {
      const g = await created({
        allowed_data_regions: ["europe"],
        content_filter_builtins: [{ slug: "credit-card", action: "redact" }],
        checks: [EU_ENGINE, CARD_REDACTED],
      });
      expect(g.checks).to.have.length(2);
      expect(g.last_check_run.passed).to.equal(true);
      expect(g.last_check_run.results.map((r: Json) => r.outcome)).to.deep.equal([
        "allowed",
        "redacted",
      ]);
      const refused = await api.patch(`/api/v1/guardrails/${g.id}`, {
        allowed_data_regions: ["us"],
      });
      const failing = expectChecksFailed(
        refused,
        /an EU key may use the embedded engine: expected allowed, got refused/,
      );
      expect(failing).to.have.length(1);
      expect(
        (await ok("GET", `/api/v1/guardrails/${g.id}`)).data.allowed_data_regions,
      ).to.deep.equal(["europe"]);
      const forced = await ok("PATCH", `/api/v1/guardrails/${g.id}`, {
        allowed_data_regions: ["us"],
        force: true,
      });
      expect(forced.data.allowed_data_regions).to.deep.equal(["us"]);
      expect(forced.data.last_check_run.forced).to.equal(true);
      expect(forced.data.last_check_run.passed).to.equal(false);
      const [event] = await audit(g.id, "guardrail.update");
      expect(event.changes.forced).to.deep.equal({ before: null, after: true });
      expect(event.changes.failing_checks.after[0]).to.match(
        /^an EU key may use the embedded engine/,
      );
      const list = await versions(g.id, 2);
      expect(list.data[0].forced).to.equal(true);
      expect(list.data[0].changes).to.not.have.property("forced");
      // Version 1 allowed europe: restoring it passes its checks.
      const back = await ok("POST", `/api/v1/guardrails/${g.id}/versions/1/restore`);
      expect(back.data.allowed_data_regions).to.deep.equal(["europe"]);
      expect(back.data.last_check_run.passed).to.equal(true);
    });

    it("refuses a restore whose checks fail with 409, and lets it through with force", async () => {
      const g = await created({
        content_filter_builtins: [{ slug: "credit-card", action: "block" }],
      });
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, {
        content_filter_builtins: [{ slug: "credit-card", action: "redact" }],
        checks: [CARD_REDACTED],
      });
      await versions(g.id, 2);
      // Version 1 had no checks, so a restore of it keeps none: the current checks do not bind it.
      await ok("POST", `/api/v1/guardrails/${g.id}/versions/1/restore`);
      await ok("POST", `/api/v1/guardrails/${g.id}/versions/2/restore`);
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, {
        content_filter_builtins: [{ slug: "credit-card", action: "block" }],
        force: true,
      });
      const all = await versions(g.id, 5);
      expect(all.data[0].forced).to.equal(true);
      // Version 5 blocks cards but carries the check that expects a redaction.
      const refused = await api.post(`/api/v1/guardrails/${g.id}/versions/5/restore`, {});
      expectChecksFailed(refused, /a card number is redacted: expected redacted, got refused/);
      const forced = await ok("POST", `/api/v1/guardrails/${g.id}/versions/5/restore`, {
        force: true,
      });
      expect(forced.data.last_check_run.forced).to.equal(true);
      const list = await versions(g.id, 6);
      expect(list.data[0]).to.include({
        action: "guardrail.restore",
        forced: true,
        restored_from: 5,
      });
    });

    it("runs the checks on demand and keeps the result on the guardrail", async () => {
      const g = await created({ allowed_models: ["railgate/espeak-ng"] });
      expect(g.last_check_run).to.equal(null);
      await ok("PATCH", `/api/v1/guardrails/${g.id}`, {
        checks: [
          {
            name: "OpenAI is not allowed",
            request: { model: "openai/tts-1" },
            expect: "refused",
            reason: "allowed_models",
          },
          { name: "the engine is", request: { model: "railgate/espeak-ng" }, expect: "refused" },
        ],
        force: true,
      });
      const run = (await ok("POST", `/api/v1/guardrails/${g.id}/checks/run`)).data;
      expect(run.passed).to.equal(false);
      expect(run.results.map((r: Json) => [r.name, r.passed])).to.deep.equal([
        ["OpenAI is not allowed", true],
        ["the engine is", false],
      ]);
      expect(run.results[0].reason).to.match(/allowed_models/);
      const shown = (await ok("GET", `/api/v1/guardrails/${g.id}`)).data.last_check_run;
      expect(shown.ran_at).to.equal(run.ran_at);
      const [event] = await audit(g.id, "guardrail.checks_run");
      expect(event.changes.last_check_run.after.passed).to.equal(false);
      // Running checks changes no policy: no new version.
      await versions(g.id, 2);
    });

    it("keeps a deleted guardrail's versions readable", async () => {
      const g = await created({ description: "gone soon" });
      await versions(g.id, 1);
      await ok("DELETE", `/api/v1/guardrails/${g.id}`);
      const list = await pollUntil(
        () => ok("GET", `/api/v1/guardrails/${g.id}/versions`),
        (b: Json) => b.data[0]?.deleted_at !== null,
      );
      expect(list.data[0].deleted_at).to.be.a("string");
      const one = (await ok("GET", `/api/v1/guardrails/${g.id}/versions/1`)).data;
      expect(one.guardrail.description).to.equal("gone soon");
      expectError(
        await api.post(`/api/v1/guardrails/${g.id}/versions/1/restore`),
        404,
        /guardrail .* not found/,
      );
    });

    describe("refusals", () => {
      it("answers 404 for an unknown guardrail or version", async () => {
        const unknown = randomUUID();
        expectError(await api.get(`/api/v1/guardrails/${unknown}/versions`), 404, /not found/);
        expectError(await api.get(`/api/v1/guardrails/${unknown}/versions/1`), 404, /not found/);
        expectError(
          await api.post(`/api/v1/guardrails/${unknown}/versions/1/restore`),
          404,
          /not found/,
        );
        expectError(await api.post(`/api/v1/guardrails/${unknown}/checks/run`), 404, /not found/);
        const g = await created({});
        await versions(g.id, 1);
        expectError(
          await api.get(`/api/v1/guardrails/${g.id}/versions/7`),
          404,
          /has no version 7 \(its versions are 1 to 1\)/,
        );
        expectError(
          await api.post(`/api/v1/guardrails/${g.id}/versions/7/restore`),
          404,
          /has no version 7/,
        );
      });

      it("answers 400 naming the field for a bad body, version or check", async () => {
        const g = await created({});
        const cases: [Promise<JsonResponse>, RegExp][] = [
          [
            api.get(`/api/v1/guardrails/${g.id}/versions/0`),
            /version must be a whole number from 1/,
          ],
          [
            api.get(`/api/v1/guardrails/${g.id}/versions/x`),
            /version must be a whole number from 1/,
          ],
          [api.get(`/api/v1/guardrails/${g.id}/versions?limit=0`), /limit/],
          [
            api.get(`/api/v1/guardrails/not-a-uuid/versions`),
            /guardrail_id must be a lowercase UUID/,
          ],
          [
            api.post(`/api/v1/guardrails/${g.id}/versions/1/restore`, { force: "yes" }),
            /force must be true or false/,
          ],
          [
            api.post(`/api/v1/guardrails/${g.id}/versions/1/restore`, { other: 1 }),
            /Unknown field "other"/,
          ],
          [api.post(`/api/v1/guardrails/${g.id}/checks/run`, { now: true }), /Unknown field "now"/],
          [api.patch(`/api/v1/guardrails/${g.id}`, { force: 1 }), /force must be true or false/],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, { checks: [{ name: "x", expect: "allowed" }] }),
            /checks\[0\]\.request is required/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [{ name: "x", request: { model: "railgate/espeak-ng" }, expect: "maybe" }],
            }),
            /checks\[0\]\.expect/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [{ name: " ", request: { model: "railgate/espeak-ng" }, expect: "allowed" }],
            }),
            /checks\[0\]\.name must be 1 to 200 characters/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [
                { name: "a", request: { model: "railgate/espeak-ng" }, expect: "allowed" },
                { name: "a", request: { model: "railgate/espeak-ng" }, expect: "allowed" },
              ],
            }),
            /checks\[1\]\.name "a" appears more than once/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [{ name: "a", request: { model: "" }, expect: "allowed" }],
            }),
            /checks\[0\]\.request\.model is required/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [{ name: "a", request: { model: "m", region: "mars" }, expect: "allowed" }],
            }),
            /checks\[0\]\.request\.region/,
          ],
          [
            api.patch(`/api/v1/guardrails/${g.id}`, {
              checks: [{ name: "a", request: { model: "m" }, expect: "allowed", reason: "x" }],
            }),
            /checks\[0\]\.reason is only taken with expect "refused"/,
          ],
        ];
        for (const [call, message] of cases) expectError(await call, 400, message);
      });
    });
  });
}
