import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { expect } from "chai";
import { GenerationSchema, GenerationStatus } from "../../gen/railgate/speech/v1/speech_pb.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { createTestDatabase, sharedTestDatabase, type TestDatabase } from "../kit/databases.js";
import { expectError } from "../kit/expect.js";
import type { Api, JsonResponse } from "../kit/http.js";
import { LANE_DATABASES } from "../kit/lane.js";
import { pollUntil } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { expectAudio, type StandardKey, useSpeechSystem } from "../kit/speech-system.js";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers of the API
type Json = any;

const DAY = 86_400_000;
const HOUR = 3_600_000;

/** The whole request-log API over real HTTP, on a real PostgreSQL and on the embedded PGlite. */
for (const kind of LANE_DATABASES) {
  describe(`gateway: the request log API (${kind})`, function () {
    this.timeout(120_000);
    let t: TestDatabase | undefined;
    let db: SqlDatabase;
    before(async function () {
      this.timeout(120_000);
      if (kind === "postgres") {
        t = await createTestDatabase("postgres");
        db = t.db;
      } else db = await sharedTestDatabase();
    });
    const h = useSpeechSystem({ embeddedEngine: "off" }, () => db);
    // After the system's own after hook (registered above): the system closes first.
    after(async () => {
      await t?.dispose();
    });

    /** Lists with `api` until `done` holds (the writer flushes within ~50 ms). */
    const listUntil = (api: Api, query: string, done: (data: Json[]) => boolean) =>
      pollUntil(
        () => api.get(`/api/v1/generations${query}`),
        (r: JsonResponse) => r.status === 200 && done(r.body.data),
      );

    async function speakOk(key: StandardKey, input = "Logged words.") {
      const res = await h.speak(
        { model: MODELS.basic, voice: "alloy", input },
        { key: key.secret },
      );
      expectAudio(res);
      return String(res.headers.get("x-generation-id"));
    }

    /** A fresh key governed by a new guardrail with `fields`. */
    async function governedKey(fields: Record<string, unknown>) {
      const key = await h.createKey();
      const g = await h.admin.post("/api/v1/guardrails", {
        name: `log guardrail ${Math.random().toString(36).slice(2, 8)}`,
        workspace_id: key.workspaceId,
        ...fields,
      });
      expect(g.status, JSON.stringify(g.body)).to.equal(201);
      const a = await h.admin.post(`/api/v1/guardrails/${g.body.data.id}/assignments/keys`, {
        key_hashes: [key.hash],
      });
      expect(a.status, JSON.stringify(a.body)).to.equal(200);
      return { key, guardrail: g.body.data as { id: string; name: string } };
    }

    it("lists a standard key's own records newest first, paged by cursor; the management key sees every key's", async () => {
      const mine = await h.createKey();
      const other = await h.createKey();
      const ids = [await speakOk(mine), await speakOk(mine), await speakOk(mine)];
      const theirs = await speakOk(other);
      const api = h.api.withKey(mine.secret);
      const all = await listUntil(api, "", (d) => d.length >= 3);
      expect(all.body.data.map((g: Json) => g.id)).to.deep.equal([...ids].reverse());
      expect(all.body.data.every((g: Json) => g.key_hash === mine.hash)).to.equal(true);
      expect(all.body.next_cursor).to.equal(null);
      // Paging: two, then the last one, each once.
      const first = await api.get("/api/v1/generations?limit=2");
      expect(first.body.data).to.have.length(2);
      expect(first.body.next_cursor).to.be.a("string");
      const second = await api.get(
        `/api/v1/generations?limit=2&cursor=${encodeURIComponent(first.body.next_cursor)}`,
      );
      expect([...first.body.data, ...second.body.data].map((g: Json) => g.id)).to.deep.equal(
        [...ids].reverse(),
      );
      expect(second.body.next_cursor).to.equal(null);
      // Another key's hash from a standard key: nothing (its own records only).
      const foreign = await api.get(`/api/v1/generations?key_hash=${other.hash}`);
      expect(foreign.body.data).to.deep.equal([]);
      // The management key: any key's, filtered.
      const admin = await listUntil(h.admin, `?key_hash=${other.hash}`, (d) => d.length === 1);
      expect(admin.body.data[0].id).to.equal(theirs);
      const byWs = await h.admin.get(
        `/api/v1/generations?workspace_id=${mine.workspaceId}&key_hash=${mine.hash}&model=${encodeURIComponent(MODELS.basic)}&provider=acme&status=completed`,
      );
      expect(byWs.body.data.map((g: Json) => g.id)).to.deep.equal([...ids].reverse());
      // GET /generation: the management key reads it too.
      const one = await h.admin.get(`/api/v1/generation?id=${theirs}`);
      expect(one.status).to.equal(200);
      expect(one.body.data.key_hash).to.equal(other.hash);
    });

    it("reads its own writes: GET /generation right after the request answers", async () => {
      const id = await speakOk(h.key);
      const res = await h.generation(id);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.data.id).to.equal(id);
    });

    it("logs a request blocked by a content filter as refused, naming the guardrail that decided", async () => {
      const { key, guardrail } = await governedKey({
        content_filter_builtins: [{ slug: "email", action: "block" }],
      });
      const res = await h.speak(
        { model: MODELS.basic, voice: "alloy", input: "Write to jane@example.com today." },
        { key: key.secret },
      );
      expectError(res, 403, /content filter/);
      const listed = await listUntil(
        h.admin,
        `?key_hash=${key.hash}&status=refused&outcome=blocked&guardrail_id=${guardrail.id}`,
        (d) => d.length === 1,
      );
      const g = listed.body.data[0];
      expect(g).to.include({
        status: "refused",
        refusal_reason: "content_blocked",
        guardrail_id: guardrail.id,
        cost_usd: 0,
        model: MODELS.basic,
      });
      expect(g.guardrail_outcomes).to.deep.equal([
        {
          slug: "email",
          label: "[EMAIL]",
          action: "block",
          count: 1,
          guardrail_id: guardrail.id,
        },
      ]);
      // Never the text.
      expect(JSON.stringify(g)).to.not.include("jane@example.com");
    });

    it("names the guardrail policy that decided: on the record, its filter outcome, and as a filter", async () => {
      // A workspace of its own: a policy write moves its type there, away from guardrails.
      const ws = await h.admin.post("/api/v1/workspaces", {
        name: `policy log ${Math.random().toString(36).slice(2, 8)}`,
      });
      expect(ws.status, JSON.stringify(ws.body)).to.equal(201);
      const key = await h.createKey({ workspace_id: ws.body.data.id });
      const moderation = await h.admin.post("/api/v1/guardrails/policies/moderation", {
        name: "No email",
        policy_type: "moderation",
        workspace_id: key.workspaceId,
        config: { content_filter_builtins: [{ slug: "email", action: "block" }] },
        api_key_hashes: [key.hash],
      });
      expect(moderation.status, JSON.stringify(moderation.body)).to.equal(201);
      const policyId = moderation.body.data.id as string;
      expectError(
        await h.speak(
          { model: MODELS.basic, voice: "alloy", input: "Write to jane@example.com today." },
          { key: key.secret },
        ),
        403,
        /content filter/,
      );
      const listed = await listUntil(h.admin, `?policy_id=${policyId}`, (d) => d.length === 1);
      const g = listed.body.data[0];
      expect(g).to.include({ key_hash: key.hash, policy_id: policyId, guardrail_id: policyId });
      expect(g.guardrail_outcomes[0]).to.include({ policy_id: policyId });
      expect((await h.admin.get(`/api/v1/generation?id=${g.id}`)).body.data.policy_id).to.equal(
        policyId,
      );

      // A budget policy's refusal names it too.
      const budget = await h.admin.post("/api/v1/guardrails/policies/budget", {
        name: "Nothing to spend",
        policy_type: "budget",
        workspace_id: key.workspaceId,
        config: { limit_usd: 0.000001, reset_interval: "daily", include_byok_in_budgets: false },
        api_key_hashes: [key.hash],
      });
      expect(budget.status, JSON.stringify(budget.body)).to.equal(201);
      expectError(
        await h.speak({ model: MODELS.basic, voice: "alloy", input: "Over." }, { key: key.secret }),
        403,
        /Budget of policy/,
      );
      const refused = await listUntil(
        h.admin,
        `?policy_id=${budget.body.data.id}`,
        (d) => d.length === 1,
      );
      expect(refused.body.data[0]).to.include({ refusal_reason: "budget_exceeded" });
    });

    it("logs a redaction on the served record, and a budget refusal with its guardrail", async () => {
      const redacting = await governedKey({
        content_filter_builtins: [{ slug: "email", action: "redact" }],
      });
      const id = await speakOk(redacting.key, "Mail jane@example.com please.");
      const red = await listUntil(
        h.admin,
        `?key_hash=${redacting.key.hash}&outcome=redacted`,
        (d) => d.length === 1,
      );
      expect(red.body.data[0]).to.include({
        id,
        status: "completed",
        guardrail_id: redacting.guardrail.id,
        refusal_reason: null,
      });
      const flagged = await h.admin.get(
        `/api/v1/generations?key_hash=${redacting.key.hash}&outcome=flagged`,
      );
      expect(flagged.body.data).to.deep.equal([]);

      const broke = await governedKey({ limit_usd: 0, reset_interval: "monthly" });
      expectError(
        await h.speak(
          { model: MODELS.basic, voice: "alloy", input: "No budget." },
          { key: broke.key.secret },
        ),
        403,
        /Budget/,
      );
      const refused = await listUntil(
        h.admin,
        `?key_hash=${broke.key.hash}`,
        (d) => d.length === 1,
      );
      expect(refused.body.data[0]).to.include({
        status: "refused",
        refusal_reason: "budget_exceeded",
        guardrail_id: broke.guardrail.id,
      });
    });

    it("answers activity per day, model and provider over the last 30 days, and one day", async () => {
      // Activity counts completed UTC days: records of earlier days, written as the writer does.
      const key = await h.createKey();
      const records = new GenerationRecords(db);
      const today = Math.floor(Date.now() / DAY) * DAY;
      const at = (daysAgo: number) => timestampFromMs(today - daysAgo * DAY + 10 * HOUR);
      const base = {
        keyHash: key.hash,
        workspaceId: key.workspaceId,
        status: GenerationStatus.COMPLETED,
        model: MODELS.basic,
        provider: "acme",
        characters: 10,
      };
      await records.insert([
        create(GenerationSchema, {
          ...base,
          id: `gen-act-1-${key.hash.slice(0, 8)}`,
          costUsd: 0.5,
          createdAt: at(1),
        }),
        create(GenerationSchema, {
          ...base,
          id: `gen-act-2-${key.hash.slice(0, 8)}`,
          costUsd: 0.25,
          createdAt: at(1),
          byok: true,
        }),
        create(GenerationSchema, {
          ...base,
          id: `gen-act-3-${key.hash.slice(0, 8)}`,
          costUsd: 1,
          createdAt: at(3),
        }),
        create(GenerationSchema, {
          ...base,
          id: `gen-act-4-${key.hash.slice(0, 8)}`,
          costUsd: 9,
          createdAt: at(40),
        }),
      ]);
      const day = (n: number) => new Date(today - n * DAY).toISOString().slice(0, 10);
      const mine = await h.api.withKey(key.secret).get("/api/v1/activity");
      expect(mine.status, JSON.stringify(mine.body)).to.equal(200);
      expect(mine.body.data).to.deep.equal([
        {
          date: day(1),
          model: MODELS.basic,
          model_permaslug: MODELS.basic,
          endpoint_id: `acme/${MODELS.basic}`,
          provider_name: "acme",
          usage: 0.5,
          byok_usage_inference: 0.25,
          requests: 2,
          prompt_tokens: 0,
          completion_tokens: 0,
          reasoning_tokens: 0,
          characters: 20,
        },
        {
          date: day(3),
          model: MODELS.basic,
          model_permaslug: MODELS.basic,
          endpoint_id: `acme/${MODELS.basic}`,
          provider_name: "acme",
          usage: 1,
          byok_usage_inference: 0,
          requests: 1,
          prompt_tokens: 0,
          completion_tokens: 0,
          reasoning_tokens: 0,
          characters: 10,
        },
      ]);
      const oneDay = await h.admin.get(
        `/api/v1/activity?date=${day(3)}&api_key_hash=${key.hash}&group_by=workspace`,
      );
      expect(oneDay.body.data).to.have.length(1);
      expect(oneDay.body.data[0]).to.include({ date: day(3), workspace_id: key.workspaceId });
    });

    it("answers usage series by hour or day, grouped, with people's names as labels", async () => {
      const { key, guardrail } = await governedKey({
        content_filter_builtins: [{ slug: "email", action: "flag" }],
      });
      await speakOk(key, "Flag jane@example.com here.");
      await speakOk(key, "Nothing to see.");
      await listUntil(h.admin, `?key_hash=${key.hash}`, (d) => d.length === 2);
      const from = new Date(Date.now() - 2 * HOUR).toISOString();
      const byGuardrail = await h.admin.get(
        `/api/v1/usage?granularity=hour&group_by=guardrail&workspace_id=${key.workspaceId}&from=${from}`,
      );
      expect(byGuardrail.status, JSON.stringify(byGuardrail.body)).to.equal(200);
      const point = byGuardrail.body.data.find((p: Json) => p.group === guardrail.id);
      expect(point).to.include({ label: guardrail.name, flagged: 1, blocked: 0 });
      expect(point.requests).to.equal(1);
      expect(point.ttfb_p50_ms).to.be.a("number");
      expect(Date.parse(point.bucket) % HOUR).to.equal(0);
      const byKey = await h.api.withKey(key.secret).get("/api/v1/usage?group_by=key");
      expect(byKey.body.data).to.have.length(1);
      expect(byKey.body.data[0]).to.include({ group: key.hash, requests: 2 });
      expect(byKey.body.data[0].label).to.match(/^speech key/);
      expect(byKey.body.data[0].spend_usd).to.be.above(0);
      const byWs = await h.admin.get(
        `/api/v1/usage?group_by=workspace&workspace_id=${key.workspaceId}`,
      );
      expect(byWs.body.data[0].label).to.be.a("string");
    });

    describe("refuses bad parameters with 400 naming them", () => {
      const cases: [string, RegExp][] = [
        ["/api/v1/generations?limit=0", /limit/],
        ["/api/v1/generations?limit=101", /limit/],
        ["/api/v1/generations?limit=ten", /limit/],
        ["/api/v1/generations?cursor=not-ours", /cursor/],
        ["/api/v1/generations?key_hash=abc", /key_hash/],
        ["/api/v1/generations?status=done", /status/],
        ["/api/v1/generations?outcome=denied", /outcome/],
        ["/api/v1/generations?from=yesterday", /from/],
        ["/api/v1/generations?to=2026-13-45T99:00:00Z", /to/],
        ["/api/v1/generations?from=2026-02-02T00:00:00Z&to=2026-02-01T00:00:00Z", /from/],
        ["/api/v1/generations?workspace_id=nope", /workspace_id/],
        ["/api/v1/generations?sort=asc", /sort/],
        ["/api/v1/activity?date=2026-1-1", /date/],
        ["/api/v1/activity?date=2001-01-01", /date/],
        ["/api/v1/activity?group_by=model", /group_by/],
        ["/api/v1/activity?api_key_hash=xyz", /api_key_hash/],
        ["/api/v1/activity?user_id=u-1", /user_id/],
        ["/api/v1/usage?granularity=minute", /granularity/],
        ["/api/v1/usage?group_by=voice", /group_by/],
        ["/api/v1/usage?from=soon", /from/],
        [
          "/api/v1/usage?granularity=hour&from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z",
          /from/,
        ],
        ["/api/v1/usage?from=2026-02-02T00:00:00Z&to=2026-02-01T00:00:00Z", /from/],
      ];
      for (const [url, field] of cases) {
        it(`GET ${url}`, async () => {
          expectError(await h.admin.get(url), 400, field);
        });
      }
      it("a standard key naming another workspace is 403", async () => {
        const res = await h.api.get(
          "/api/v1/generations?workspace_id=00000000-0000-4000-8000-000000000000",
        );
        expectError(res, 403, /workspace_id/);
      });
      it("no key is 401", async () => {
        for (const path of ["/api/v1/generations", "/api/v1/activity", "/api/v1/usage"]) {
          expectError(await h.api.withKey(undefined).get(path), 401);
        }
      });
    });
  });
}
