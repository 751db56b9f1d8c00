import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import {
  createGuardrail,
  createWorkspace,
  expectGuardrail,
  uniqueName,
  useSystem,
  ZDR_VENDOR_FIELDS,
} from "../kit/gateway-harness.js";

const BUILTIN_LABELS: Record<string, string> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
};

const STRING_LIST_FIELDS = [
  "allowed_models",
  "allowed_providers",
  "ignored_models",
  "ignored_providers",
] as const;

describe("gateway: POST /api/v1/guardrails (create)", () => {
  const h = useSystem();
  const create = (body: Record<string, unknown>) => h.api.post("/api/v1/guardrails", body);

  describe("response", () => {
    it("answers 201 { data } with a complete guardrail, created_at set and updated_at null", async () => {
      const before = Date.now();
      const res = await create({ name: "Minimal" });
      expectStatus(res, 201);
      expect(Object.keys(res.body)).to.deep.equal(["data"]);
      const g = res.body.data;
      expectGuardrail(g);
      expect(g.name).to.equal("Minimal");
      expect(g.updated_at).to.equal(null);
      expect(Date.parse(g.created_at)).to.be.within(before - 5_000, Date.now() + 5_000);
      expect(g.is_workspace_default).to.equal(false);
    });

    it("places a guardrail without workspace_id in the default workspace", async () => {
      const g = await createGuardrail(h.api);
      expect(g.workspace_id).to.equal(h.system.defaultWorkspaceId);
      const ws = await h.api.get(`/api/v1/workspaces/${g.workspace_id}`);
      expect(ws.body.data.is_default).to.equal(true);
    });

    it("enforces nothing by default: lists null, booleans false, no budget", async () => {
      const g = await createGuardrail(h.api);
      for (const f of [
        "allowed_data_regions",
        ...STRING_LIST_FIELDS,
        "content_filter_builtins",
        "content_filters",
        "limit_usd",
        "reset_interval",
        "allow_safety_retention_google",
        "allow_safety_retention_other",
      ]) {
        expect(g[f], f).to.equal(null);
      }
      for (const f of [
        "enable_free_model_publication",
        "enable_free_model_training",
        "enable_paid_model_training",
        "include_byok_in_budgets",
        "forbid_audio_cache",
        ...ZDR_VENDOR_FIELDS,
      ]) {
        expect(g[f], f).to.equal(false);
      }
    });

    it("stores every writable field and reads it back unchanged", async () => {
      const body = {
        name: "Everything",
        description: "All the knobs",
        allowed_data_regions: ["europe", "us"],
        allowed_models: ["openai/gpt-4o-mini-tts", "google/gemini-tts"],
        allowed_providers: ["openai"],
        ignored_models: ["x-ai/grok-voice"],
        ignored_providers: ["azure"],
        content_filter_builtins: [{ slug: "email", action: "redact" }],
        content_filters: [{ pattern: "secret-\\d+", action: "block", label: "[SECRET]" }],
        enable_free_model_publication: true,
        enable_free_model_training: true,
        enable_paid_model_training: true,
        enforce_zdr_anthropic: true,
        enforce_zdr_openai: false,
        enforce_zdr_google: true,
        enforce_zdr_xai: false,
        enforce_zdr_other: true,
        allow_safety_retention_google: false,
        allow_safety_retention_other: true,
        include_byok_in_budgets: true,
        limit_usd: 12.5,
        reset_interval: "weekly",
        forbid_audio_cache: true,
      };
      const g = await createGuardrail(h.api, body);
      expectGuardrail(g);
      const read = await h.api.get(`/api/v1/guardrails/${g.id}`);
      expectStatus(read, 200);
      for (const [k, v] of Object.entries(body)) {
        if (k === "content_filter_builtins") continue;
        expect(g[k], k).to.deep.equal(v);
        expect(read.body.data[k], k).to.deep.equal(v);
      }
      expect(g.content_filter_builtins).to.deep.equal([
        { slug: "email", action: "redact", label: "[EMAIL]" },
      ]);
      expect(read.body.data).to.deep.equal(g);
    });
  });

  describe("name and description", () => {
    it("rejects a missing, empty, blank or 201-character name", async () => {
      expectError(await create({ description: "no name" }), 400, /name/);
      expectError(await create({ name: "" }), 400, /name/);
      expectError(await create({ name: "   " }), 400, /name/);
      expectError(await create({ name: "n".repeat(201) }), 400, /name/);
      expectError(await create({ name: "é".repeat(201) }), 400, /name/);
    });

    it("accepts 1 and 200 characters, counting characters rather than bytes", async () => {
      expect((await createGuardrail(h.api, { name: "x" })).name).to.equal("x");
      for (const name of ["n".repeat(200), "é".repeat(200), "😀".repeat(200)]) {
        const g = await createGuardrail(h.api, { name });
        expect(g.name).to.equal(name);
      }
    });

    it("accepts a 1000-character description and rejects 1001", async () => {
      const d = "d".repeat(1000);
      expect((await createGuardrail(h.api, { description: d })).description).to.equal(d);
      const wide = "ü".repeat(1000);
      expect((await createGuardrail(h.api, { description: wide })).description).to.equal(wide);
      expectError(
        await create({ name: uniqueName("g"), description: "d".repeat(1001) }),
        400,
        /description/,
      );
    });
  });

  describe("nullable fields and model aliases, as OpenRouter takes them", () => {
    it("takes null for every boolean as its default, and enforce_zdr fills vendors sent as null", async () => {
      const g = await createGuardrail(h.api, {
        enable_free_model_publication: null,
        enable_free_model_training: null,
        enable_paid_model_training: null,
        include_byok_in_budgets: null,
        enforce_zdr: true,
        enforce_zdr_anthropic: null,
        enforce_zdr_openai: false,
        allow_safety_retention_google: null,
        workspace_id: null,
      });
      expect(g.enable_free_model_publication).to.equal(false);
      expect(g.enable_free_model_training).to.equal(false);
      expect(g.enable_paid_model_training).to.equal(false);
      expect(g.include_byok_in_budgets).to.equal(false);
      expect(g.enforce_zdr_anthropic).to.equal(true);
      expect(g.enforce_zdr_openai).to.equal(false);
      expect(g.allow_safety_retention_google).to.equal(null);
      expect(g.workspace_id).to.equal(h.system.defaultWorkspaceId);
      const plain = await createGuardrail(h.api, { enforce_zdr_xai: null });
      expect(plain.enforce_zdr_xai).to.equal(false);
    });

    it("stores allowed_models and ignored_models aliases as canonical ids, each once", async () => {
      const g = await createGuardrail(h.api, {
        allowed_models: ["railgate/espeak", "espeak-ng", "gpt-4o-mini-tts"],
        ignored_models: ["tts-1", "acme/unknown-model"],
      });
      expect(g.allowed_models).to.deep.equal(["railgate/espeak-ng", "openai/gpt-4o-mini-tts"]);
      expect(g.ignored_models).to.deep.equal(["openai/tts-1", "acme/unknown-model"]);
    });
  });

  describe("list fields", () => {
    for (const field of ["allowed_data_regions", ...STRING_LIST_FIELDS]) {
      it(`rejects an empty ${field} array and accepts null`, async () => {
        expectError(await create({ name: uniqueName("g"), [field]: [] }), 400, new RegExp(field));
        const g = await createGuardrail(h.api, { [field]: null });
        expect(g[field]).to.equal(null);
      });
    }

    // OpenRouter accepts [] for the filter lists: no filters, like null (and stored as null).
    for (const field of ["content_filter_builtins", "content_filters"]) {
      it(`accepts an empty ${field} array as no filters, and null`, async () => {
        expect((await createGuardrail(h.api, { [field]: [] }))[field]).to.equal(null);
        expect((await createGuardrail(h.api, { [field]: null }))[field]).to.equal(null);
      });
    }

    for (const field of STRING_LIST_FIELDS) {
      it(`keeps ${field} values in order and rejects blank elements`, async () => {
        const g = await createGuardrail(h.api, { [field]: ["b/one", "a/two"] });
        expect(g[field]).to.deep.equal(["b/one", "a/two"]);
        expectError(
          await create({ name: uniqueName("g"), [field]: ["ok", " "] }),
          400,
          new RegExp(`${field}\\[1\\]`),
        );
      });
    }

    it("accepts every region and rejects an unknown one, naming the element", async () => {
      const g = await createGuardrail(h.api, { allowed_data_regions: ["global", "europe", "us"] });
      expect(g.allowed_data_regions).to.deep.equal(["global", "europe", "us"]);
      expectError(
        await create({ name: uniqueName("g"), allowed_data_regions: ["europe", "mars"] }),
        400,
        /allowed_data_regions\[1\]/,
      );
      expectError(
        await create({ name: uniqueName("g"), allowed_data_regions: ["EUROPE"] }),
        400,
        /allowed_data_regions\[0\]/,
      );
    });
  });

  describe("limit_usd and reset_interval", () => {
    it("rejects only one of the pair", async () => {
      expectError(await create({ name: uniqueName("g"), limit_usd: 10 }), 400, /limit_usd/);
      expectError(
        await create({ name: uniqueName("g"), reset_interval: "daily" }),
        400,
        /reset_interval/,
      );
      expectError(
        await create({ name: uniqueName("g"), limit_usd: 10, reset_interval: null }),
        400,
        /together/,
      );
      expectError(
        await create({ name: uniqueName("g"), limit_usd: null, reset_interval: "monthly" }),
        400,
        /together/,
      );
    });

    it("accepts both together, each interval, and both null", async () => {
      for (const reset_interval of ["daily", "weekly", "monthly"]) {
        const g = await createGuardrail(h.api, { limit_usd: 0.25, reset_interval });
        expect(g.limit_usd).to.equal(0.25);
        expect(g.reset_interval).to.equal(reset_interval);
      }
      const zero = await createGuardrail(h.api, { limit_usd: 0, reset_interval: "daily" });
      expect(zero.limit_usd).to.equal(0);
      const none = await createGuardrail(h.api, { limit_usd: null, reset_interval: null });
      expect(none.limit_usd).to.equal(null);
      expect(none.reset_interval).to.equal(null);
    });

    it("rejects a negative limit and an unknown interval", async () => {
      expectError(
        await create({ name: uniqueName("g"), limit_usd: -1, reset_interval: "daily" }),
        400,
        /limit_usd/,
      );
      expectError(
        await create({ name: uniqueName("g"), limit_usd: 5, reset_interval: "yearly" }),
        400,
        /reset_interval/,
      );
    });
  });

  describe("ZDR fields", () => {
    it("copies enforce_zdr: true into every per-vendor field and reads enforce_zdr as null", async () => {
      const g = await createGuardrail(h.api, { enforce_zdr: true });
      expect(g.enforce_zdr).to.equal(null);
      for (const f of ZDR_VENDOR_FIELDS) expect(g[f], f).to.equal(true);
      const read = await h.api.get(`/api/v1/guardrails/${g.id}`);
      expect(read.body.data.enforce_zdr).to.equal(null);
      for (const f of ZDR_VENDOR_FIELDS) expect(read.body.data[f], f).to.equal(true);
    });

    it("lets explicit per-vendor values win over enforce_zdr", async () => {
      const g = await createGuardrail(h.api, {
        enforce_zdr: true,
        enforce_zdr_openai: false,
        enforce_zdr_other: false,
      });
      expect(g.enforce_zdr_anthropic).to.equal(true);
      expect(g.enforce_zdr_openai).to.equal(false);
      expect(g.enforce_zdr_google).to.equal(true);
      expect(g.enforce_zdr_xai).to.equal(true);
      expect(g.enforce_zdr_other).to.equal(false);

      const f = await createGuardrail(h.api, { enforce_zdr: false, enforce_zdr_xai: true });
      expect(f.enforce_zdr).to.equal(null);
      expect(ZDR_VENDOR_FIELDS.map((k) => f[k])).to.deep.equal([false, false, false, true, false]);
    });

    it("treats enforce_zdr: null as not sent", async () => {
      const g = await createGuardrail(h.api, { enforce_zdr: null, enforce_zdr_google: true });
      expect(ZDR_VENDOR_FIELDS.map((k) => g[k])).to.deep.equal([false, false, true, false, false]);
    });
  });

  describe("include_byok_in_budgets", () => {
    it("is false by default and true when asked", async () => {
      expect((await createGuardrail(h.api)).include_byok_in_budgets).to.equal(false);
      const g = await createGuardrail(h.api, { include_byok_in_budgets: true });
      expect(g.include_byok_in_budgets).to.equal(true);
    });
  });

  describe("builtin content filters", () => {
    for (const action of ["block", "redact", "flag"]) {
      it(`accepts all eight builtin slugs with action ${action} and their fixed labels`, async () => {
        const builtins = Object.keys(BUILTIN_LABELS).map((slug) => ({ slug, action }));
        const g = await createGuardrail(h.api, { content_filter_builtins: builtins });
        expect(g.content_filter_builtins).to.have.length(8);
        for (const [i, b] of g.content_filter_builtins.entries()) {
          const slug = Object.keys(BUILTIN_LABELS)[i] as string;
          expect(b.slug).to.equal(slug);
          expect(b.action).to.equal(action);
          expect(b.label).to.equal(BUILTIN_LABELS[slug]);
        }
      });
    }

    it("ignores a label sent on input: the builtin's own label is returned", async () => {
      const g = await createGuardrail(h.api, {
        content_filter_builtins: [
          { slug: "ssn", action: "redact", label: "[MY_OWN]" },
          { slug: "phone", action: "redact", label: null },
        ],
      });
      expect(g.content_filter_builtins.map((b: { label: string }) => b.label)).to.deep.equal([
        "[SSN]",
        "[PHONE]",
      ]);
      const read = await h.api.get(`/api/v1/guardrails/${g.id}`);
      expect(read.body.data.content_filter_builtins[0].label).to.equal("[SSN]");
    });

    it("rejects an unknown slug, a bad or missing action, and a duplicate slug", async () => {
      const bad = (builtins: unknown[]) =>
        create({ name: uniqueName("g"), content_filter_builtins: builtins });
      expectError(
        await bad([
          { slug: "email", action: "flag" },
          { slug: "passport", action: "block" },
        ]),
        400,
        /content_filter_builtins\[1\]\.slug/,
      );
      expectError(
        await bad([{ slug: "email", action: "erase" }]),
        400,
        /content_filter_builtins\[0\]\.action/,
      );
      expectError(await bad([{ slug: "email" }]), 400, /content_filter_builtins\[0\]\.action/);
      expectError(await bad([{ action: "block" }]), 400, /content_filter_builtins\[0\]\.slug/);
      expectError(
        await bad([
          { slug: "email", action: "flag" },
          { slug: "email", action: "block" },
        ]),
        400,
        /content_filter_builtins\[1\]\.slug/,
      );
    });

    it("takes scan_scope only on regex-prompt-injection", async () => {
      for (const scan_scope of ["user_only", "all_messages"]) {
        const g = await createGuardrail(h.api, {
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "block", scan_scope },
          ],
        });
        expect(g.content_filter_builtins[0].scan_scope).to.equal(scan_scope);
      }
      // Omitted, it reads back as its default; other builtins have no scan_scope at all.
      const d = await createGuardrail(h.api, {
        content_filter_builtins: [
          { slug: "regex-prompt-injection", action: "flag" },
          { slug: "email", action: "flag" },
        ],
      });
      expect(d.content_filter_builtins).to.deep.equal([
        {
          slug: "regex-prompt-injection",
          action: "flag",
          label: "[PROMPT_INJECTION]",
          scan_scope: "all_messages",
        },
        { slug: "email", action: "flag", label: "[EMAIL]" },
      ]);
      expectError(
        await create({
          name: uniqueName("g"),
          content_filter_builtins: [{ slug: "email", action: "block", scan_scope: "user_only" }],
        }),
        400,
        /content_filter_builtins\[0\]\.scan_scope/,
      );
      expectError(
        await create({
          name: uniqueName("g"),
          content_filter_builtins: [
            { slug: "regex-prompt-injection", action: "block", scan_scope: "system_only" },
          ],
        }),
        400,
        /scan_scope/,
      );
    });
  });

  describe("custom content filters", () => {
    const bad = (filters: unknown[]) => create({ name: uniqueName("g"), content_filters: filters });

    it("stores pattern, action and label; a missing label reads as null", async () => {
      const g = await createGuardrail(h.api, {
        content_filters: [
          { pattern: "acct-[0-9]{6}", action: "redact", label: "[ACCOUNT]" },
          { pattern: "(?i)forbidden", action: "flag" },
          { pattern: "x+", action: "block", label: "L".repeat(100) },
        ],
      });
      expect(g.content_filters).to.deep.equal([
        { pattern: "acct-[0-9]{6}", action: "redact", label: "[ACCOUNT]" },
        { pattern: "(?i)forbidden", action: "flag", label: null },
        { pattern: "x+", action: "block", label: "L".repeat(100) },
      ]);
    });

    it("requires a non-empty pattern and an action", async () => {
      expectError(await bad([{ action: "block" }]), 400, /content_filters\[0\]\.pattern/);
      expectError(
        await bad([{ pattern: "", action: "block" }]),
        400,
        /content_filters\[0\]\.pattern/,
      );
      expectError(await bad([{ pattern: "a", action: null }]), 400, /content_filters\[0\]\.action/);
      expectError(
        await bad([{ pattern: "a", action: "block" }, { pattern: "b" }]),
        400,
        /content_filters\[1\]\.action/,
      );
      expectError(
        await bad([{ pattern: "a", action: "delete" }]),
        400,
        /content_filters\[0\]\.action/,
      );
    });

    it("rejects a label over 100 characters", async () => {
      expectError(
        await bad([{ pattern: "a", action: "redact", label: "L".repeat(101) }]),
        400,
        /content_filters\[0\]\.label/,
      );
    });

    it("rejects patterns that cannot run in linear time, naming the field", async () => {
      for (const pattern of ["(a)\\1", "(?=x)", "(?<=x)y", "a(?!b)"]) {
        const res = await bad([{ pattern, action: "block" }]);
        expectError(res, 400, /content_filters\[0\]\.pattern/);
      }
      expectError(
        await bad([
          { pattern: "ok", action: "flag" },
          { pattern: "(a)\\1", action: "flag" },
        ]),
        400,
        /content_filters\[1\]\.pattern/,
      );
      expectError(
        await bad([{ pattern: "([a-z]", action: "flag" }]),
        400,
        /content_filters\[0\]\.pattern/,
      );
    });
  });

  describe("workspace_id", () => {
    it("creates in a named workspace", async () => {
      const ws = await createWorkspace(h.api);
      const g = await createGuardrail(h.api, { workspace_id: ws.id });
      expect(g.workspace_id).to.equal(ws.id);
    });

    it("rejects an unknown or malformed workspace_id with 400", async () => {
      expectError(
        await create({ name: uniqueName("g"), workspace_id: randomUUID() }),
        400,
        /workspace_id/,
      );
      expectError(
        await create({ name: uniqueName("g"), workspace_id: "not-a-uuid" }),
        400,
        /workspace_id/,
      );
    });
  });
});
