import { Validator as OpenApiValidator } from "@seriousme/openapi-schema-validator";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "chai";
import type { Api, JsonResponse } from "../kit/http.js";
import { pollUntil } from "../kit/poll.js";
import { MODELS } from "../kit/speech-catalog.js";
import { useSpeechSystem } from "../kit/speech-system.js";
import { MANAGEMENT_KEY } from "../kit/system.js";

// biome-ignore lint/suspicious/noExplicitAny: the document and the bodies are arbitrary JSON
type Doc = any;

// ajv-formats is CommonJS: under nodenext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * The document against the running system, both ways: every documented operation is called
 * over HTTP and its answer (success and errors) validated against the schema the document
 * gives for that status; every value rule the document states for a body field or a query
 * parameter is broken once and must be refused with a 400 that names the field.
 */
/** A valid config of each guardrail policy type. */
const POLICY_CONFIGS = {
  budget: { limit_usd: 10, reset_interval: "weekly", include_byok_in_budgets: false },
  model_availability: { allowed_models: [MODELS.espeak], allowed_data_regions: ["europe"] },
  moderation: { content_filter_builtins: [{ slug: "email", action: "redact" }] },
} as const;

describe("gateway: OpenAPI document against real answers", function () {
  this.timeout(120_000);
  const h = useSpeechSystem();
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<object, ValidateFunction>();
  /** "METHOD /path" of every operation whose success answer was validated. */
  const answered = new Set<string>();

  before(async () => {
    const res = await h.admin.get("/api/v1/openapi.json");
    expect(res.status).to.equal(200);
    doc = res.body;
  });

  function operation(method: string, path: string): Doc {
    const op = doc.paths[path]?.[method.toLowerCase()];
    if (!op) throw new Error(`${method} ${path} is not documented`);
    return op;
  }

  /** The schema the document gives `path`'s answer with `status` (or its default), compiled. */
  function validatorFor(method: string, path: string, status: number): ValidateFunction {
    const op = operation(method, path);
    const response = op.responses[String(status)] ?? op.responses.default;
    expect(response, `${method} ${path} documents no ${status}`).to.be.an("object");
    const schema = response.content?.["application/json"]?.schema;
    expect(schema, `${method} ${path} ${status} has no JSON schema`).to.be.an("object");
    let validate = compiled.get(schema);
    if (!validate) {
      // The document's components ride along so that its $refs resolve.
      validate = ajv.compile({ ...schema, components: doc.components });
      compiled.set(schema, validate);
    }
    return validate;
  }

  /** `res` is what the document says `method path` answers with its status. */
  function expectDocumented(method: string, path: string, res: JsonResponse): void {
    const where = `${method} ${path} -> ${res.status}`;
    expect(res.headers.get("content-type"), where).to.match(/^application\/json/);
    const validate = validatorFor(method, path, res.status);
    const ok = validate(res.body);
    expect(
      ok,
      `${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body)}`,
    ).to.equal(true);
    if (res.status < 300) {
      expect(Object.keys(operation(method, path).responses), where).to.include(String(res.status));
      answered.add(`${method} ${path}`);
    }
  }

  /** Calls `concrete` (the documented `path` with its parameters filled in) and validates the answer. */
  async function call(
    api: Api,
    method: string,
    path: string,
    concrete: string,
    body?: unknown,
  ): Promise<JsonResponse> {
    const res = await api.request(method, concrete, body);
    expectDocumented(method, path, res);
    return res;
  }

  it("is a valid OpenAPI 3.1 document", async () => {
    const result = await new OpenApiValidator().validate(doc);
    expect(result.errors, JSON.stringify(result.errors)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(doc.openapi).to.match(/^3\.1\./);
  });

  it("every JSON operation answers as documented, successes and errors alike", async () => {
    const admin = h.admin;
    const anon = admin.withKey(undefined);
    await call(anon, "GET", "/healthz", "/healthz");
    await call(anon, "GET", "/livez", "/livez");
    await call(anon, "GET", "/api/v1/openapi.json", "/api/v1/openapi.json");

    // Workspaces and credits.
    const ws = (
      await call(admin, "POST", "/api/v1/workspaces", "/api/v1/workspaces", {
        name: "Conformance",
        description: "documented",
      })
    ).body.data;
    const wsPath = `/api/v1/workspaces/${ws.id}`;
    await call(admin, "GET", "/api/v1/workspaces", "/api/v1/workspaces?limit=5");
    await call(admin, "GET", "/api/v1/workspaces/{id}", wsPath);
    await call(admin, "PATCH", "/api/v1/workspaces/{id}", wsPath, { description: null });
    await call(admin, "POST", "/api/v1/workspaces/{id}/credits", `${wsPath}/credits`, {
      amount_usd: 25,
    });
    await call(admin, "GET", "/api/v1/workspaces/{id}/credits", `${wsPath}/credits`);
    await call(admin, "GET", "/api/v1/workspaces/{id}/audio-cache", `${wsPath}/audio-cache`);
    await call(admin, "POST", "/api/v1/workspaces/{id}/members/add", `${wsPath}/members/add`, {
      user_ids: ["conformance-user", "leaving-user"],
    });
    await call(
      admin,
      "POST",
      "/api/v1/workspaces/{id}/members/remove",
      `${wsPath}/members/remove`,
      {
        user_ids: ["leaving-user"],
      },
    );
    await call(admin, "GET", "/api/v1/workspaces/{id}/members", `${wsPath}/members?limit=5`);
    await call(admin, "GET", "/api/v1/credits", "/api/v1/credits");
    await call(admin, "GET", "/api/v1/credits", `/api/v1/credits?workspace_id=${ws.id}`);

    // A guardrail with every kind of field set, so each branch of its schema is exercised.
    const g = (
      await call(admin, "POST", "/api/v1/guardrails", "/api/v1/guardrails", {
        name: "conformance guardrail",
        description: "all fields",
        workspace_id: ws.id,
        allowed_data_regions: ["europe", "us"],
        allowed_models: [MODELS.espeak],
        ignored_providers: ["nobody"],
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" },
        ],
        content_filters: [{ pattern: "secret\\d+", action: "flag", label: "SECRET" }],
        allow_safety_retention_google: true,
        limit_usd: 10,
        reset_interval: "weekly",
        checks: [
          {
            name: "the engine from Europe",
            request: { model: MODELS.espeak, region: "europe", input: "hello" },
            expect: "allowed",
          },
        ],
      })
    ).body.data;
    const gPath = `/api/v1/guardrails/${g.id}`;
    await call(admin, "GET", "/api/v1/guardrails", "/api/v1/guardrails?limit=10&offset=0");
    await call(admin, "GET", "/api/v1/guardrails/{id}", gPath);
    await call(admin, "PATCH", "/api/v1/guardrails/{id}", gPath, { content_filters: null });
    // Its history (the create and the update), a restore, and its checks run on demand.
    const versions = "/api/v1/guardrails/{id}/versions";
    await call(admin, "GET", versions, `${gPath}/versions`);
    await call(admin, "GET", `${versions}/{n}`, `${gPath}/versions/1`);
    await call(admin, "POST", `${versions}/{n}/restore`, `${gPath}/versions/1/restore`, {});
    await call(admin, "POST", "/api/v1/guardrails/{id}/checks/run", `${gPath}/checks/run`);
    await call(admin, "POST", "/api/v1/guardrails/{id}/simulate", `${gPath}/simulate`, {
      change: { limit_usd: 1, reset_interval: "daily" },
    });
    // A change in shadow: started, reported, promoted; started again and ended.
    const shadow = "/api/v1/guardrails/{id}/shadow";
    const shadowBody = {
      change: { description: "shadowed" },
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    };
    await call(admin, "POST", shadow, `${gPath}/shadow`, shadowBody);
    await call(admin, "GET", shadow, `${gPath}/shadow`);
    await call(admin, "POST", `${shadow}/promote`, `${gPath}/shadow/promote`, {});
    await call(admin, "POST", shadow, `${gPath}/shadow`, shadowBody);
    await call(admin, "DELETE", shadow, `${gPath}/shadow`);

    // Keys: the secret once, then by hash; the standard key asks about itself.
    const created = (
      await call(admin, "POST", "/api/v1/keys", "/api/v1/keys", {
        name: "conformance key",
        workspace_id: ws.id,
        limit: 5,
        limit_reset: "weekly",
        expires_at: "2099-01-01T00:00:00Z",
        rate_limit_per_minute: 100,
      })
    ).body;
    const kPath = `/api/v1/keys/${created.data.hash}`;
    await call(admin, "GET", "/api/v1/keys", "/api/v1/keys?include_disabled=true");
    await call(admin, "GET", "/api/v1/keys/{hash}", kPath);
    await call(admin, "PATCH", "/api/v1/keys/{hash}", kPath, { limit: null });
    await call(admin.withKey(created.key), "GET", "/api/v1/key", "/api/v1/key");
    await call(admin, "GET", "/api/v1/key", "/api/v1/key");
    await call(admin, "GET", "/api/v1/keys/{hash}/explain", `${kPath}/explain?region=europe`);
    await call(
      admin,
      "GET",
      "/api/v1/keys/{hash}/explain",
      `${kPath}/explain?model=${MODELS.espeak}`,
    );

    // Assignments, each list both ways.
    const ak = `${gPath}/assignments/keys`;
    const am = `${gPath}/assignments/members`;
    await call(admin, "POST", "/api/v1/guardrails/{id}/assignments/keys", ak, {
      key_hashes: [created.data.hash],
    });
    await call(admin, "POST", "/api/v1/guardrails/{id}/assignments/members", am, {
      member_user_ids: ["user-1"],
    });
    await call(admin, "GET", "/api/v1/guardrails/{id}/assignments/keys", ak);
    await call(admin, "GET", "/api/v1/guardrails/{id}/assignments/members", am);
    await call(
      admin,
      "GET",
      "/api/v1/guardrails/assignments/keys",
      "/api/v1/guardrails/assignments/keys",
    );
    await call(
      admin,
      "GET",
      "/api/v1/guardrails/assignments/members",
      "/api/v1/guardrails/assignments/members",
    );
    await call(admin, "POST", "/api/v1/guardrails/{id}/assignments/keys/remove", `${ak}/remove`, {
      key_hashes: [created.data.hash],
    });
    await call(
      admin,
      "POST",
      "/api/v1/guardrails/{id}/assignments/members/remove",
      `${am}/remove`,
      { member_user_ids: ["user-1"] },
    );

    // Guardrail policies: each type's CRUD, and an assignment of each kind of subject.
    for (const [type, config] of Object.entries(POLICY_CONFIGS)) {
      const base = `/api/v1/guardrails/policies/${type}`;
      const policy = (
        await call(admin, "POST", base, base, {
          name: `conformance ${type}`,
          policy_type: type,
          workspace_id: ws.id,
          config,
          is_workspace_default: true,
        })
      ).body.data;
      await call(admin, "GET", base, `${base}?workspace_id=${ws.id}&limit=5`);
      await call(admin, "GET", `${base}/{id}`, `${base}/${policy.id}`);
      await call(admin, "PUT", `${base}/{id}`, `${base}/${policy.id}`, { name: "renamed", config });
      // Its history (the create and the replace), a restore, and its checks run on demand.
      const pPath = `${base}/${policy.id}`;
      await call(admin, "GET", `${base}/{id}/versions`, `${pPath}/versions`);
      await call(admin, "GET", `${base}/{id}/versions/{n}`, `${pPath}/versions/1`);
      await call(admin, "POST", `${base}/{id}/versions/{n}/restore`, `${pPath}/versions/1/restore`);
      if (type !== "budget") {
        const checks = [
          { name: "the engine", request: { model: MODELS.espeak }, expect: "allowed" },
        ];
        await call(admin, "PUT", `${base}/{id}`, pPath, { name: "checked", config, checks });
        await call(admin, "POST", `${base}/{id}/checks/run`, `${pPath}/checks/run`);
      }
      if (type === "budget") {
        const state = {
          opted_out: false,
          policy_ids: [],
          workspace_default_policy_ids: [policy.id],
        };
        const change = {
          assigned: true,
          expected_assignment: state,
          policy_id: policy.id,
          policy_type: type,
          workspace_id: ws.id,
        };
        const akp = "/api/v1/guardrails/policies/assignments/api-keys/{subject}";
        const amp = "/api/v1/guardrails/policies/assignments/members/{subject}";
        const ak = `/api/v1/guardrails/policies/assignments/api-keys/${created.data.hash}`;
        const am = "/api/v1/guardrails/policies/assignments/members/user-1";
        await call(admin, "GET", akp, `${ak}?workspace_id=${ws.id}&policy_type=budget`);
        await call(admin, "GET", amp, `${am}?workspace_id=${ws.id}&policy_type=budget`);
        await call(admin, "PUT", akp, ak, change);
        await call(admin, "PUT", amp, am, change);
      }
      // Its what-if, and a change in shadow: started, reported, promoted; started again and ended.
      const own = `${base}/${policy.id}`;
      await call(admin, "POST", `${base}/{id}/simulate`, `${own}/simulate`, {
        change: { name: "what if", config },
      });
      const shadowBody = {
        change: { name: "shadowed", config },
        expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      };
      await call(admin, "POST", `${base}/{id}/shadow`, `${own}/shadow`, shadowBody);
      await call(admin, "GET", `${base}/{id}/shadow`, `${own}/shadow`);
      await call(admin, "POST", `${base}/{id}/shadow/promote`, `${own}/shadow/promote`, {});
      await call(admin, "POST", `${base}/{id}/shadow`, `${own}/shadow`, shadowBody);
      await call(admin, "DELETE", `${base}/{id}/shadow`, `${own}/shadow`);
      await call(admin, "DELETE", `${base}/{id}`, `${base}/${policy.id}`);
    }

    // A workspace-wide policy covering the conformance workspace alone.
    const account = "/api/v1/guardrails/policies/account";
    const wide = (
      await call(admin, "POST", account, account, {
        name: "conformance account",
        policy_type: "moderation",
        config: POLICY_CONFIGS.moderation,
        workspace_ids: [ws.id],
      })
    ).body.data;
    await call(admin, "GET", account, `${account}?policy_type=moderation`);
    await call(admin, "PUT", `${account}/{id}`, `${account}/${wide.id}`, {
      name: "renamed",
      config: {},
      checks: [{ name: "the engine", request: { model: MODELS.espeak }, expect: "allowed" }],
    });
    // Its history, a restore, and its checks run on demand.
    const widePath = `${account}/${wide.id}`;
    await call(admin, "GET", `${account}/{id}/versions`, `${widePath}/versions`);
    await call(admin, "GET", `${account}/{id}/versions/{n}`, `${widePath}/versions/2`);
    await call(admin, "POST", `${account}/{id}/checks/run`, `${widePath}/checks/run`);
    // Its what-if over the workspaces it covers.
    await call(admin, "POST", `${account}/{id}/simulate`, `${widePath}/simulate`, {
      change: { name: "what if", config: POLICY_CONFIGS.moderation },
    });
    // A change in shadow there: started, reported, promoted; started again and ended.
    const wideShadow = {
      change: { name: "shadowed", config: POLICY_CONFIGS.moderation },
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    };
    await call(admin, "POST", `${account}/{id}/shadow`, `${widePath}/shadow`, wideShadow);
    await call(admin, "GET", `${account}/{id}/shadow`, `${widePath}/shadow`);
    await call(admin, "POST", `${account}/{id}/shadow/promote`, `${widePath}/shadow/promote`, {
      force: true,
    });
    await call(admin, "POST", `${account}/{id}/shadow`, `${widePath}/shadow`, wideShadow);
    await call(admin, "DELETE", `${account}/{id}/shadow`, `${widePath}/shadow`);
    await call(
      admin,
      "POST",
      `${account}/{id}/versions/{n}/restore`,
      `${widePath}/versions/1/restore`,
    );
    await call(admin, "DELETE", `${account}/{id}`, `${account}/${wide.id}`);

    // Models: the list, the count, one by id (both spellings), its endpoints.
    const models = await call(anon, "GET", "/api/v1/models", "/api/v1/models?limit=3");
    expect(models.body.data).to.not.be.empty;
    await call(anon, "GET", "/api/v1/models", "/api/v1/models");
    await call(anon, "GET", "/api/v1/models/count", "/api/v1/models/count?zdr=true");
    const [author, slug] = MODELS.espeak.split("/");
    await call(anon, "GET", "/api/v1/model/{author}/{slug}", `/api/v1/model/${author}/${slug}`);
    await call(anon, "GET", "/api/v1/models/{author}/{slug}", `/api/v1/models/${author}/${slug}`);
    await call(
      anon,
      "GET",
      "/api/v1/models/{author}/{slug}/endpoints",
      `/api/v1/models/${author}/${slug}/endpoints`,
    );

    // The audit log of what this test just did, one page and the next.
    const audit = await call(admin, "GET", "/api/v1/audit-log", "/api/v1/audit-log?limit=2");
    expect(audit.body.data).to.have.length(2);
    await call(
      admin,
      "GET",
      "/api/v1/audit-log",
      `/api/v1/audit-log?limit=2&cursor=${audit.body.next_cursor}&workspace_id=${ws.id}`,
    );
    await call(admin, "GET", "/api/v1/audit-log", "/api/v1/audit-log?from=2026-01-01&limit=0");

    // The models the standard key's guardrails leave it; the zero-data-retention endpoints.
    const user = await call(h.api, "GET", "/api/v1/models/user", "/api/v1/models/user?limit=2");
    expect(user.body.data).to.not.be.empty;
    await call(anon, "GET", "/api/v1/endpoints/zdr", "/api/v1/endpoints/zdr");

    // Speech: the answer is audio (a documented media type); its record is JSON.
    const spoken = await h.speak({ model: MODELS.espeak, voice: "alloy", input: "Documented." });
    expect(spoken.status).to.equal(200);
    const speechOp = operation("POST", "/api/v1/audio/speech");
    const audioType = String(spoken.headers.get("content-type")).split(";")[0];
    expect(Object.keys(speechOp.responses["200"].content)).to.include(audioType);
    answered.add("POST /api/v1/audio/speech");
    const generationId = spoken.headers.get("x-generation-id");
    await h.waitForGeneration(String(generationId));
    await call(h.api, "GET", "/api/v1/generation", `/api/v1/generation?id=${generationId}`);
    await call(admin, "GET", "/api/v1/generation", `/api/v1/generation?id=${generationId}`);

    // The request log: once the record is in the database, every view of it has rows to check.
    const listed = await pollUntil(
      () => h.api.get("/api/v1/generations?limit=5"),
      (r) => r.status === 200 && r.body.data.length > 0,
    );
    expectDocumented("GET", "/api/v1/generations", listed);
    expect(listed.body.data.length).to.be.greaterThan(0);
    await call(admin, "GET", "/api/v1/generations", "/api/v1/generations?status=completed&limit=1");
    await call(admin, "GET", "/api/v1/generations", "/api/v1/generations?cursor=not-ours");
    await call(admin, "GET", "/api/v1/activity", "/api/v1/activity?group_by=workspace");
    await call(h.api, "GET", "/api/v1/activity", "/api/v1/activity");
    const usage = await call(
      admin,
      "GET",
      "/api/v1/usage",
      "/api/v1/usage?granularity=hour&group_by=key",
    );
    expect(usage.body.data.length).to.be.greaterThan(0);

    // Errors: each is the documented envelope under its status (or the default).
    await call(anon, "GET", "/api/v1/keys", "/api/v1/keys");
    await call(h.api, "GET", "/api/v1/keys", "/api/v1/keys");
    await call(admin, "GET", "/api/v1/keys", "/api/v1/keys?limit=0");
    await call(admin, "GET", "/api/v1/guardrails/{id}", "/api/v1/guardrails/not-a-uuid");
    await call(
      admin,
      "GET",
      "/api/v1/guardrails/{id}",
      "/api/v1/guardrails/00000000-0000-4000-8000-000000000000",
    );
    await call(anon, "GET", "/api/v1/models/{author}/{slug}", "/api/v1/models/no/such-model");
    await call(admin, "POST", "/api/v1/workspaces", "/api/v1/workspaces", { name: "x", zz: 1 });

    // Budget-alert webhooks: the secret once, a test event, its delivery by cursor.
    const hook = (
      await call(admin, "POST", "/api/v1/webhooks", "/api/v1/webhooks", {
        workspace_id: ws.id,
        url: "http://127.0.0.1:9/conformance",
        thresholds_pct: [80],
        credits_below_usd: 2,
      })
    ).body.data;
    const hPath = `/api/v1/webhooks/${hook.id}`;
    await call(admin, "GET", "/api/v1/webhooks", `/api/v1/webhooks?workspace_id=${ws.id}`);
    await call(admin, "GET", "/api/v1/webhooks/{id}", hPath);
    await call(admin, "PATCH", "/api/v1/webhooks/{id}", hPath, { credits_below_usd: null });
    await call(admin, "POST", "/api/v1/webhooks/{id}/test", `${hPath}/test`);
    await call(admin, "POST", "/api/v1/webhooks/{id}/test", `${hPath}/test`);
    const page = await call(
      admin,
      "GET",
      "/api/v1/webhooks/{id}/deliveries",
      `${hPath}/deliveries?limit=1`,
    );
    await call(
      admin,
      "GET",
      "/api/v1/webhooks/{id}/deliveries",
      `${hPath}/deliveries?limit=1&cursor=${page.body.next_cursor}`,
    );
    await call(admin, "GET", "/api/v1/webhooks/{id}", "/api/v1/webhooks/not-a-uuid");

    // Deletes last: each answers { deleted }.
    await call(admin, "DELETE", "/api/v1/webhooks/{id}", hPath);
    await call(admin, "DELETE", "/api/v1/keys/{hash}", kPath);
    await call(admin, "DELETE", "/api/v1/guardrails/{id}", gPath);
    await call(admin, "DELETE", "/api/v1/workspaces/{id}", wsPath);
  });

  it("the non-JSON operations answer with a documented media type", async () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Doc>)) {
      for (const [method, op] of Object.entries(item as Record<string, Doc>)) {
        const success = Object.entries(op.responses as Record<string, Doc>).find(([s]) =>
          s.startsWith("2"),
        );
        const types = Object.keys(success?.[1].content ?? {});
        if (types.includes("application/json") || method !== "get") continue;
        const res = await fetch(`${h.baseUrl}${path}`, {
          headers: op.security?.length === 0 ? {} : { authorization: `Bearer ${MANAGEMENT_KEY}` },
        });
        const where = `GET ${path}`;
        expect(String(res.status), where).to.equal(success?.[0]);
        const type = String(res.headers.get("content-type")).split(";")[0];
        expect(
          types.map((t) => t.split(";")[0]),
          where,
        ).to.include(type);
        await res.arrayBuffer();
        answered.add(`GET ${path}`);
      }
    }
  });

  it("every documented operation's success answer was checked above", () => {
    const documented = Object.entries(doc.paths as Record<string, Doc>).flatMap(([path, item]) =>
      Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.filter((op) => !answered.has(op))).to.deep.equal([]);
  });

  describe("every value rule the document states is one the API enforces", () => {
    /** A real resource for each path parameter, so a rule is what refuses, not a 404. */
    let params: Record<string, string>;
    let speakerKey: string;

    before(async () => {
      const ws = (await h.admin.post("/api/v1/workspaces", { name: "Rules" })).body.data;
      const g = (await h.admin.post("/api/v1/guardrails", { name: "rules", workspace_id: ws.id }))
        .body.data;
      // The key and the policies in a workspace of their own: a policy write moves its type
      // there from the guardrails, which the guardrail probes use elsewhere.
      const own = (await h.admin.post("/api/v1/workspaces", { name: "Rules policies" })).body.data;
      const key = (await h.admin.post("/api/v1/keys", { name: "rules key", workspace_id: own.id }))
        .body;
      const hook = (
        await h.admin.post("/api/v1/webhooks", { workspace_id: ws.id, url: "http://127.0.0.1:9/r" })
      ).body.data;
      params = {
        id: g.id,
        hash: key.data.hash,
        workspace: ws.id,
        webhook: hook.id,
        policyWorkspace: own.id,
      };
      // A policy of each type in the key's workspace, for the policy paths.
      for (const [type, config] of Object.entries(POLICY_CONFIGS)) {
        const base = `/api/v1/guardrails/policies/${type}`;
        const policy = (
          await h.admin.post(base, {
            name: "rules",
            policy_type: type,
            config,
            workspace_id: own.id,
          })
        ).body.data;
        params[`policy:${type}`] = policy.id;
      }
      // A workspace-wide policy that covers no workspace: its probes govern nothing.
      params["policy:account"] = (
        await h.admin.post("/api/v1/guardrails/policies/account", {
          name: "rules",
          policy_type: "budget",
          config: POLICY_CONFIGS.budget,
        })
      ).body.data.id;
      speakerKey = key.key;
    });

    function concrete(path: string): string {
      // /workspaces/{id} takes the workspace, /webhooks/{id} the webhook; every other {id} is
      // the guardrail.
      const policyType = /^\/api\/v1\/guardrails\/policies\/(\w+)\/\{id\}(\/.*)?$/.exec(path)?.[1];
      if (policyType) return path.replace("{id}", params[`policy:${policyType}`] ?? "x");
      if (path.startsWith("/api/v1/guardrails/policies/assignments/api-keys/"))
        return path.replace("{subject}", params.hash ?? "x");
      const idOf = path.startsWith("/api/v1/workspaces/")
        ? params.workspace
        : path.startsWith("/api/v1/webhooks/")
          ? params.webhook
          : params.id;
      return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
        name === "id" ? (idOf ?? "x") : (params[name] ?? "x"),
      );
    }

    /** A valid body for each operation, so the one broken field is the only fault. */
    let probes = 0;
    function validBody(method: string, path: string): Record<string, unknown> {
      // A name of its own each time: a workspace's slug derives from it and must be unique.
      probes += 1;
      const bodies: Record<string, Record<string, unknown>> = {
        "POST /api/v1/guardrails": { name: `rule probe ${probes}` },
        "POST /api/v1/keys": { name: `rule probe ${probes}` },
        "POST /api/v1/workspaces": { name: `Rule probe ${probes}` },
        "POST /api/v1/workspaces/{id}/credits": { amount_usd: 1 },
        "POST /api/v1/workspaces/{id}/members/add": { user_ids: ["probe-user"] },
        "POST /api/v1/workspaces/{id}/members/remove": { user_ids: ["probe-user"] },
        "POST /api/v1/webhooks": { url: "http://127.0.0.1:9/probe" },
        "POST /api/v1/audio/speech": { model: MODELS.espeak, voice: "alloy", input: "Rule." },
        "POST /api/v1/guardrails/{id}/simulate": { change: { name: "probe" } },
        "POST /api/v1/guardrails/{id}/shadow": {
          change: { name: "probe" },
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        },
        "POST /api/v1/guardrails/{id}/assignments/keys": { key_hashes: [params.hash] },
        "POST /api/v1/guardrails/{id}/assignments/keys/remove": { key_hashes: [params.hash] },
        "POST /api/v1/guardrails/{id}/assignments/members": { member_user_ids: ["u"] },
        "POST /api/v1/guardrails/{id}/assignments/members/remove": { member_user_ids: ["u"] },
      };
      // A workspace-wide policy's what-if takes the change its PUT takes.
      if (path.startsWith("/api/v1/guardrails/policies/account") && path.endsWith("/simulate"))
        return { change: { name: `rule probe ${probes}`, config: POLICY_CONFIGS.budget } };
      if (path.startsWith("/api/v1/guardrails/policies/account") && path.endsWith("/promote"))
        return {};
      if (path.startsWith("/api/v1/guardrails/policies/account") && path.endsWith("/shadow"))
        return {
          change: { name: `rule probe ${probes}`, config: POLICY_CONFIGS.budget },
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
        };
      if (path.startsWith("/api/v1/guardrails/policies/account"))
        return {
          name: `rule probe ${probes}`,
          policy_type: "budget",
          config: POLICY_CONFIGS.budget,
        };
      const policy =
        /^\/api\/v1\/guardrails\/policies\/(budget|model_availability|moderation)/.exec(
          path,
        )?.[1] as keyof typeof POLICY_CONFIGS | undefined;
      // A policy's what-if and shadow take the change a PUT takes.
      const change = policy && { name: `rule probe ${probes}`, config: POLICY_CONFIGS[policy] };
      if (policy && path.endsWith("/simulate")) return { change };
      if (policy && path.endsWith("/shadow/promote")) return {};
      if (policy && path.endsWith("/shadow"))
        return { change, expires_at: new Date(Date.now() + 86_400_000).toISOString() };
      if (policy)
        return {
          name: `rule probe ${probes}`,
          policy_type: policy,
          config: POLICY_CONFIGS[policy],
          workspace_id: params.policyWorkspace,
        };
      if (path.startsWith("/api/v1/guardrails/policies/assignments/")) {
        // Unassigning a policy the subject does not hold: a valid change that changes nothing.
        return {
          assigned: false,
          expected_assignment: {
            opted_out: false,
            policy_ids: [],
            workspace_default_policy_ids: [],
          },
          policy_id: params["policy:budget"],
          policy_type: "budget",
        };
      }
      return bodies[`${method} ${path}`] ?? {};
    }

    /** Fields a rule reads together with another (the service refuses one without the other). */
    const COMPANIONS: Record<string, Record<string, unknown>> = {
      limit_usd: { reset_interval: "monthly" },
      reset_interval: { limit_usd: 1 },
    };

    const NOT_IN_ENUM = "zz-not-a-documented-value";

    /** OpenRouter's creator_user_id is the member_user_id the service checks (and names). */
    const SERVICE_NAME: Record<string, string> = { creator_user_id: "member_user_id" };

    /** A string that does not match `pattern`. */
    function notMatching(pattern: string): string {
      const re = new RegExp(pattern, "u");
      const found = ["   ", "-Not A Slug-", "!"].find((s) => !re.test(s));
      if (found === undefined) throw new Error(`no probe breaks pattern ${pattern}`);
      return found;
    }

    /** One value per rule of `schema` that breaks that rule alone (as far as JSON can). */
    function breakers(schema: Doc): { rule: string; value: unknown }[] {
      const out: { rule: string; value: unknown }[] = [];
      const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
      if (schema.maxLength !== undefined)
        out.push({ rule: "maxLength", value: "a".repeat(schema.maxLength + 1) });
      if (schema.minLength > 0) out.push({ rule: "minLength", value: "" });
      if (schema.pattern !== undefined)
        out.push({ rule: "pattern", value: notMatching(schema.pattern) });
      if (schema.enum !== undefined) out.push({ rule: "enum", value: NOT_IN_ENUM });
      if (schema.const !== undefined && typeof schema.const === "boolean")
        out.push({ rule: "const", value: !schema.const });
      if (schema.format === "uuid") out.push({ rule: "format", value: "not-a-uuid" });
      const step = type === "integer" ? 1 : 0.01;
      if (schema.maximum !== undefined && schema.maximum < 2 ** 31 - 1)
        out.push({ rule: "maximum", value: schema.maximum + step });
      if (schema.minimum !== undefined && schema.minimum > -(2 ** 31))
        out.push({ rule: "minimum", value: schema.minimum - step });
      if (type === "array") {
        const items = schema.items ?? {};
        const item = (i: number) => (items.enum ? items.enum[0] : `item-${i}`);
        if (schema.minItems > 0) out.push({ rule: "minItems", value: [] });
        if (schema.maxItems !== undefined && (items.type === "string" || items.enum)) {
          out.push({
            rule: "maxItems",
            value: Array.from({ length: schema.maxItems + 1 }, (_, i) => item(i)),
          });
        }
        for (const b of items.type === "string" || items.enum ? breakers(items) : []) {
          out.push({ rule: `items.${b.rule}`, value: [b.value] });
        }
      }
      return out;
    }

    it("body fields: a value past each documented rule is refused with 400 naming the field", async () => {
      let checked = 0;
      for (const [path, item] of Object.entries(doc.paths as Record<string, Doc>)) {
        for (const [m, op] of Object.entries(item as Record<string, Doc>)) {
          const schema = op.requestBody?.content["application/json"].schema;
          if (!schema) continue;
          const method = m.toUpperCase();
          const api = method === "POST" && path === "/api/v1/audio/speech" ? speakerKey : null;
          const client = api ? h.admin.withKey(api) : h.admin;
          for (const [field, fieldSchema] of Object.entries(schema.properties as Doc)) {
            for (const { rule, value } of breakers(fieldSchema)) {
              const body = { ...validBody(method, path), ...COMPANIONS[field], [field]: value };
              const res = await client.request(method, concrete(path), body);
              const at = `${method} ${path} ${field} ${rule}`;
              expect(res.status, `${at}: ${JSON.stringify(res.body)}`).to.equal(400);
              expect(res.body.error.message, at).to.include(SERVICE_NAME[field] ?? field);
              expectDocumented(method, path, res);
              checked += 1;
            }
          }
        }
      }
      // The document states rules (and this test is not vacuous): lengths, enums, ranges, counts.
      expect(checked).to.be.greaterThan(40);
    });

    /** The values at the edge of each bound of `schema`: the rule allows them. */
    function edges(schema: Doc): { rule: string; value: unknown }[] {
      const out: { rule: string; value: unknown }[] = [];
      if (schema.maxLength !== undefined)
        out.push({ rule: "maxLength", value: "a".repeat(schema.maxLength) });
      if (schema.maximum !== undefined && schema.maximum < 2 ** 31 - 1)
        out.push({ rule: "maximum", value: schema.maximum });
      if (schema.minimum !== undefined && schema.minimum > -(2 ** 31))
        out.push({ rule: "minimum", value: schema.minimum });
      return out;
    }

    it("body fields: the value at each documented bound is not refused (the document is not looser)", async () => {
      let checked = 0;
      for (const [path, item] of Object.entries(doc.paths as Record<string, Doc>)) {
        // Speech bounds are probed above only: a voice of the maximum length is no voice of
        // the model, which the service refuses for that reason.
        if (path === "/api/v1/audio/speech") continue;
        for (const [m, op] of Object.entries(item as Record<string, Doc>)) {
          const schema = op.requestBody?.content["application/json"].schema;
          if (!schema) continue;
          const method = m.toUpperCase();
          for (const [field, fieldSchema] of Object.entries(schema.properties as Doc)) {
            for (const { rule, value } of edges(fieldSchema)) {
              const body = { ...validBody(method, path), ...COMPANIONS[field], [field]: value };
              const res = await h.admin.request(method, concrete(path), body);
              const at = `${method} ${path} ${field} at its ${rule}`;
              expect(res.status, `${at}: ${JSON.stringify(res.body)}`).to.be.lessThan(300);
              expectDocumented(method, path, res);
              checked += 1;
            }
          }
        }
      }
      expect(checked).to.be.greaterThan(15);
    });

    it("nested rules: filters, regions and turns are held to what the document says", async () => {
      const schema = operation("POST", "/api/v1/guardrails").requestBody.content["application/json"]
        .schema;
      const builtin = schema.properties.content_filter_builtins.items.properties;
      const custom = schema.properties.content_filters.items.properties;
      const cases: [Record<string, unknown>, string][] = [
        [{ allowed_data_regions: ["mars"] }, "allowed_data_regions[0]"],
        [{ content_filter_builtins: [{ slug: NOT_IN_ENUM, action: "block" }] }, "slug"],
        [{ content_filter_builtins: [{ slug: "email", action: NOT_IN_ENUM }] }, "action"],
        [
          { content_filter_builtins: [{ slug: "email", action: "flag", scan_scope: NOT_IN_ENUM }] },
          "scan_scope",
        ],
        [
          {
            content_filters: [
              { pattern: "a".repeat(custom.pattern.maxLength + 1), action: "flag" },
            ],
          },
          "pattern",
        ],
        [
          {
            content_filters: [
              { pattern: "x", action: "flag", label: "l".repeat(custom.label.maxLength + 1) },
            ],
          },
          "label",
        ],
      ];
      expect(builtin.slug.enum).to.include("email");
      expect(builtin.action.enum).to.deep.equal(["block", "redact", "flag"]);
      for (const [extra, field] of cases) {
        const res = await h.admin.post("/api/v1/guardrails", { name: "nested", ...extra });
        expect(res.status, JSON.stringify(res.body)).to.equal(400);
        expect(res.body.error.message).to.include(field);
      }
      const speech = operation("POST", "/api/v1/audio/speech").requestBody.content[
        "application/json"
      ].schema;
      const turns = speech.properties.input.oneOf[1];
      const tooMany = Array.from({ length: turns.maxItems + 1 }, () => ({ text: "t" }));
      const res = await h.speak({ model: MODELS.dialogue, input: tooMany });
      expect(res.status).to.equal(400);
      expect(res.body.error.message).to.match(/input/);
      // Too much text is 413, as the field's description says.
      const text = speech.properties.input.oneOf[0];
      expect(speech.properties.input.description).to.include("413");
      const long = await h.speak({
        model: MODELS.espeak,
        voice: "alloy",
        input: "a".repeat(text.maxLength + 1),
      });
      expect(long.status).to.equal(413);
      expect(long.body.error.message).to.match(/input/);
    });

    it("query parameters: a value past each documented rule is refused with 400 naming it", async () => {
      let checked = 0;
      for (const [path, item] of Object.entries(doc.paths as Record<string, Doc>)) {
        for (const [m, op] of Object.entries(item as Record<string, Doc>)) {
          const client = /standard|Any valid key/.test(op.description)
            ? h.admin.withKey(speakerKey)
            : h.admin;
          for (const p of (op.parameters as Doc[]).filter((x) => x.in === "query")) {
            for (const { rule, value } of breakers(p.schema)) {
              const method = m.toUpperCase();
              const url = `${concrete(path)}?${p.name}=${encodeURIComponent(String(value))}`;
              const res = await client.request(method, url);
              const at = `${method} ${url} (${rule})`;
              expect(res.status, `${at}: ${JSON.stringify(res.body)}`).to.equal(400);
              expect(res.body.error.message, at).to.include(p.name);
              expectDocumented(method, path, res);
              checked += 1;
            }
          }
        }
      }
      expect(checked).to.be.greaterThan(20);
    });
  });
});
