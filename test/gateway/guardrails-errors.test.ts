import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import { createGuardrail, sendRaw, uniqueName, useSystem } from "../kit/gateway-harness.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

const MAX_BODY = 1_048_576;

describe("gateway: request and error handling", () => {
  const h = useSystem();
  const raw = (method: string, path: string, body: string, contentType?: string) =>
    h.api.request(method, path, undefined, {
      raw: body,
      headers: contentType ? { "content-type": contentType } : {},
    });

  describe("JSON bodies", () => {
    it("rejects malformed JSON with 400 on create and update", async () => {
      expectError(
        await raw("POST", "/api/v1/guardrails", '{"name": "x",', "application/json"),
        400,
        /JSON/,
      );
      const g = await createGuardrail(h.api);
      expectError(
        await raw("PATCH", `/api/v1/guardrails/${g.id}`, "{name: x}", "application/json"),
        400,
        /JSON/,
      );
    });

    it("rejects an empty body and a body that is not a JSON object", async () => {
      for (const body of ["", "   ", "[]", '"name"', "null", "42"]) {
        expectError(await raw("POST", "/api/v1/guardrails", body, "application/json"), 400);
      }
    });

    it("rejects a wrong or missing Content-Type with 415", async () => {
      const body = JSON.stringify({ name: uniqueName("g") });
      expectError(await raw("POST", "/api/v1/guardrails", body, "text/plain"), 415, /Content-Type/);
      expectError(
        await raw("POST", "/api/v1/guardrails", body, "application/x-www-form-urlencoded"),
        415,
      );
      const none = await sendRaw(`${h.baseUrl()}/api/v1/guardrails`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${MANAGEMENT_KEY}`,
          "content-length": String(Buffer.byteLength(body)),
        },
        chunks: [body],
      });
      expect(none.status).to.equal(415);
      expect(none.body).to.deep.equal({
        error: { code: 415, message: 'Content-Type must be application/json, got "none"' },
      });
      const g = await createGuardrail(h.api);
      expectError(
        await raw("PATCH", `/api/v1/guardrails/${g.id}`, '{"name":"x"}', "text/json"),
        415,
      );
      expectError(await raw("POST", "/api/v1/keys", '{"name":"x"}', "text/plain"), 415);
    });

    it("accepts application/json with parameters and in any case", async () => {
      const body = JSON.stringify({ name: uniqueName("g") });
      expectStatus(
        await raw("POST", "/api/v1/guardrails", body, "application/json; charset=utf-8"),
        201,
      );
      expectStatus(await raw("POST", "/api/v1/guardrails", body, "Application/JSON"), 201);
    });
  });

  describe("unknown fields and wrong types", () => {
    const create = (body: Record<string, unknown>) =>
      h.api.post("/api/v1/guardrails", { name: uniqueName("g"), ...body });

    it("rejects an unknown top-level field, naming it", async () => {
      expectError(await h.api.post("/api/v1/guardrails", { nmae: "typo" }), 400, /"nmae"/);
      expectError(await create({ enforce_zdr_meta: true }), 400, /enforce_zdr_meta/);
      expectError(await create({ id: randomUUID() }), 400, /"id"/);
      expectError(await create({ created_at: "2024-01-01T00:00:00Z" }), 400, /created_at/);
      const g = await createGuardrail(h.api);
      expectError(
        await h.api.patch(`/api/v1/guardrails/${g.id}`, { allowed_model: ["a"] }),
        400,
        /"allowed_model"/,
      );
    });

    it("treats names of Object.prototype members as unknown fields", async () => {
      for (const name of ["constructor", "toString", "hasOwnProperty", "__proto__"]) {
        const body = `{"name":"x","${name}":1}`;
        const res = await raw("POST", "/api/v1/guardrails", body, "application/json");
        expectError(res, 400);
        expect(res.body.error.message).to.equal(`Unknown field "${name}"`);
        const nested = `{"name":"x","content_filters":[{"pattern":"a","action":"flag","${name}":1}]}`;
        const res2 = await raw("POST", "/api/v1/guardrails", nested, "application/json");
        expect(res2.body.error.message).to.equal(`Unknown field "content_filters[0].${name}"`);
      }
      const key = await raw(
        "POST",
        "/api/v1/keys",
        '{"name":"k","constructor":1}',
        "application/json",
      );
      expectError(key, 400, /^Unknown field "constructor"$/);
    });

    it("rejects an unknown nested field, naming its path", async () => {
      expectError(
        await create({ content_filters: [{ pattern: "a", action: "block", foo: 1 }] }),
        400,
        /content_filters\[0\]\.foo/,
      );
      expectError(
        await create({
          content_filter_builtins: [
            { slug: "email", action: "block" },
            { slug: "ssn", action: "block", severity: "high" },
          ],
        }),
        400,
        /content_filter_builtins\[1\]\.severity/,
      );
    });

    it("rejects a wrong JSON type, naming the field", async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ name: 42 }, /^name/],
        [{ description: ["x"] }, /^description/],
        [{ allowed_models: "openai/tts" }, /^allowed_models/],
        [{ allowed_models: ["ok", 7] }, /allowed_models\[1\]/],
        [{ allowed_data_regions: [true] }, /allowed_data_regions\[0\]/],
        [{ allowed_providers: { openai: true } }, /^allowed_providers/],
        [{ enable_free_model_training: "yes" }, /^enable_free_model_training/],
        [{ enforce_zdr: 1 }, /^enforce_zdr/],
        [{ enforce_zdr_openai: "true" }, /^enforce_zdr_openai/],
        [{ include_byok_in_budgets: "false" }, /^include_byok_in_budgets/],
        [{ limit_usd: "10", reset_interval: "daily" }, /^limit_usd/],
        [{ limit_usd: 10, reset_interval: 1 }, /^reset_interval/],
        [{ workspace_id: 12 }, /^workspace_id/],
        [{ content_filters: { pattern: "a" } }, /^content_filters/],
        [{ content_filters: ["a"] }, /content_filters\[0\]/],
        [{ content_filters: [{ pattern: 1, action: "block" }] }, /content_filters\[0\]\.pattern/],
        [
          { content_filter_builtins: [{ slug: "email", action: true }] },
          /content_filter_builtins\[0\]\.action/,
        ],
      ];
      for (const [body, message] of cases) {
        expectError(await create(body), 400, message);
      }
    });
  });

  describe("body size", () => {
    /** A valid create body padded with whitespace to exactly `size` bytes. */
    const padded = (size: number) => {
      const json = JSON.stringify({ name: uniqueName("big") });
      return `${json}${" ".repeat(size - Buffer.byteLength(json))}`;
    };

    it("accepts a body of exactly the limit (1 MiB by default)", async () => {
      expectStatus(
        await raw("POST", "/api/v1/guardrails", padded(MAX_BODY), "application/json"),
        201,
      );
    });

    it("rejects a body one byte over the limit with 413", async () => {
      expectError(
        await raw("POST", "/api/v1/guardrails", padded(MAX_BODY + 1), "application/json"),
        413,
        /too large/,
      );
    });

    it("rejects an over-limit chunked body (no Content-Length) with 413", async () => {
      const chunk = " ".repeat(64 * 1024);
      const chunks = ['{"name":"chunked"', ...Array.from({ length: 20 }, () => chunk), "}"];
      const res = await sendRaw(`${h.baseUrl()}/api/v1/guardrails`, {
        method: "POST",
        headers: { authorization: `Bearer ${MANAGEMENT_KEY}`, "content-type": "application/json" },
        chunks,
      });
      expect(res.status).to.equal(413);
      expect(res.body).to.deep.equal({
        error: { code: 413, message: `Request body too large: at most ${MAX_BODY} bytes` },
      });
    });

    it("still serves requests afterwards", async () => {
      expectStatus(await h.api.get("/api/v1/guardrails?limit=1"), 200);
    });
  });

  describe("routes and methods", () => {
    it("answers 404 for unknown routes", async () => {
      for (const path of [
        "/api/v1/nope",
        "/api/v2/guardrails",
        "/",
        "/api/v1/guardrails/x/y/z/w",
        "/api/v1/guardrail",
      ]) {
        expectError(await h.api.get(path), 404);
      }
    });

    it("answers 405 with an Allow header for a wrong method", async () => {
      const cases: [string, string, string[]][] = [
        ["PUT", "/api/v1/guardrails", ["GET", "POST"]],
        ["DELETE", "/api/v1/guardrails", ["GET", "POST"]],
        ["POST", `/api/v1/guardrails/${randomUUID()}`, ["GET", "PATCH", "DELETE"]],
        ["PUT", `/api/v1/guardrails/${randomUUID()}`, ["GET", "PATCH", "DELETE"]],
        ["POST", "/api/v1/guardrails/assignments/keys", ["GET"]],
        ["GET", `/api/v1/guardrails/${randomUUID()}/assignments/keys/remove`, ["POST"]],
        ["POST", "/healthz", ["GET"]],
        ["DELETE", "/api/v1/key", ["GET"]],
      ];
      for (const [method, path, allow] of cases) {
        const res = await h.api.request(method, path);
        expectError(res, 405, new RegExp(method));
        const header = res.headers.get("allow");
        expect(header, `${method} ${path}`).to.be.a("string");
        expect((header as string).split(/,\s*/).sort()).to.deep.equal([...allow].sort());
      }
    });
  });

  describe("ids", () => {
    it("rejects a non-UUID guardrail id with 400 on every route that takes one", async () => {
      const bad = "not-a-uuid";
      expectError(await h.api.get(`/api/v1/guardrails/${bad}`), 400, /UUID/);
      expectError(await h.api.patch(`/api/v1/guardrails/${bad}`, { name: "x" }), 400, /UUID/);
      expectError(await h.api.delete(`/api/v1/guardrails/${bad}`), 400, /UUID/);
      expectError(await h.api.get(`/api/v1/guardrails/${bad}/assignments/keys`), 400, /UUID/);
      expectError(
        await h.api.post(`/api/v1/guardrails/${bad}/assignments/members`, {
          member_user_ids: ["u"],
        }),
        400,
        /UUID/,
      );
    });

    it("answers 404 for an unknown guardrail on update", async () => {
      expectError(await h.api.patch(`/api/v1/guardrails/${randomUUID()}`, { name: "x" }), 404);
    });

    it("rejects workspace_id in an update with 400", async () => {
      const g = await createGuardrail(h.api);
      expectError(
        await h.api.patch(`/api/v1/guardrails/${g.id}`, { workspace_id: g.workspace_id }),
        400,
        /workspace_id/,
      );
    });

    it("does not echo a huge id back in full", async () => {
      const long = "x".repeat(5000);
      const res = await h.api.get(`/api/v1/guardrails/${long}`);
      expectError(res, 400);
      expect(res.body.error.message.length).to.be.below(500);
    });
  });

  describe("health", () => {
    it("answers GET /healthz without a key", async () => {
      const res = await h.anon.get("/healthz");
      expectStatus(res, 200);
      expect(res.body).to.deep.equal({ status: "ok", region: "global" });
    });
  });
});
