import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { expectError, expectStatus } from "../kit/expect.js";
import {
  createGuardrail,
  createWorkspace,
  expectGuardrail,
  useSystem,
  ZDR_VENDOR_FIELDS,
} from "../kit/gateway-harness.js";

/** A guardrail with every field set, so "unchanged" is observable for each one. */
const FULL = {
  description: "Full policy",
  allowed_data_regions: ["europe"],
  allowed_models: ["openai/gpt-4o-mini-tts", "google/gemini-tts"],
  allowed_providers: ["openai", "google"],
  ignored_models: ["x-ai/grok-voice"],
  ignored_providers: ["azure"],
  content_filter_builtins: [
    { slug: "email", action: "redact" },
    { slug: "regex-prompt-injection", action: "block", scan_scope: "user_only" },
  ],
  content_filters: [{ pattern: "secret-\\d+", action: "block", label: "[SECRET]" }],
  enable_free_model_publication: true,
  enable_free_model_training: false,
  enable_paid_model_training: true,
  enforce_zdr_anthropic: true,
  enforce_zdr_openai: false,
  enforce_zdr_google: true,
  enforce_zdr_xai: false,
  enforce_zdr_other: true,
  allow_safety_retention_google: false,
  allow_safety_retention_other: null,
  include_byok_in_budgets: true,
  limit_usd: 100,
  reset_interval: "monthly",
  forbid_audio_cache: true,
};

describe("gateway: PATCH /api/v1/guardrails/{id} (update)", () => {
  const h = useSystem();
  const patch = (id: string, body: Record<string, unknown>) =>
    h.api.patch(`/api/v1/guardrails/${id}`, body);
  const get = async (id: string) => {
    const res = await h.api.get(`/api/v1/guardrails/${id}`);
    expectStatus(res, 200);
    return res.body.data;
  };
  /** PATCH that must succeed; returns the response's guardrail. */
  const update = async (id: string, body: Record<string, unknown>) => {
    const res = await patch(id, body);
    expectStatus(res, 200);
    expect(Object.keys(res.body)).to.deep.equal(["data"]);
    expectGuardrail(res.body.data);
    return res.body.data;
  };
  /** PATCH that must fail with 400 and leave the stored guardrail exactly as it was. */
  const rejected = async (id: string, body: Record<string, unknown>, message: RegExp) => {
    const before = await get(id);
    expectError(await patch(id, body), 400, message);
    expect(await get(id)).to.deep.equal(before);
  };

  describe("response and timestamps", () => {
    it("answers 200 { data } with updated_at set and created_at kept", async () => {
      const g = await createGuardrail(h.api);
      expect(g.updated_at).to.equal(null);
      const u = await update(g.id, { description: "changed" });
      expect(u.id).to.equal(g.id);
      expect(u.created_at).to.equal(g.created_at);
      expect(u.updated_at).to.be.a("string");
      expect(Date.parse(u.updated_at)).to.be.at.least(Date.parse(g.created_at));
      expect((await get(g.id)).updated_at).to.equal(u.updated_at);
    });
  });

  describe("omitted fields", () => {
    for (const [field, value] of [
      ["name", "Renamed"],
      ["description", "only this"],
      ["allowed_models", ["anthropic/claude-voice"]],
      ["enable_free_model_training", true],
      ["enforce_zdr_xai", true],
      ["allow_safety_retention_other", true],
    ] as const) {
      it(`leaves every other field unchanged when only ${field} is sent`, async () => {
        const g = await createGuardrail(h.api, FULL);
        const u = await update(g.id, { [field]: value });
        expect(u[field]).to.deep.equal(value);
        const expected = { ...g, [field]: value, updated_at: u.updated_at };
        expect(u).to.deep.equal(expected);
        expect(await get(g.id)).to.deep.equal(expected);
      });
    }

    it("keeps include_byok_in_budgets when omitted, changes it when sent", async () => {
      const g = await createGuardrail(h.api, { include_byok_in_budgets: true });
      expect((await update(g.id, { description: "x" })).include_byok_in_budgets).to.equal(true);
      expect(
        (await update(g.id, { include_byok_in_budgets: false })).include_byok_in_budgets,
      ).to.equal(false);
      expect((await update(g.id, { name: "still off" })).include_byok_in_budgets).to.equal(false);
      expect((await get(g.id)).include_byok_in_budgets).to.equal(false);
    });
  });

  describe("collections: replace semantics", () => {
    for (const [field, first, second] of [
      ["allowed_data_regions", ["global", "europe"], ["us"]],
      ["allowed_models", ["a/one", "a/two"], ["b/three"]],
      ["allowed_providers", ["p1", "p2"], ["p3"]],
      ["ignored_models", ["a/one", "a/two"], ["a/two", "c/four"]],
      ["ignored_providers", ["p1", "p2"], ["p2"]],
    ] as const) {
      it(`replaces ${field} with the set sent, and null clears it`, async () => {
        const g = await createGuardrail(h.api, { [field]: first });
        expect(g[field]).to.deep.equal(first);
        expect((await update(g.id, { [field]: second }))[field]).to.deep.equal(second);
        expect((await get(g.id))[field]).to.deep.equal(second);
        expect((await update(g.id, { [field]: null }))[field]).to.equal(null);
        expect((await get(g.id))[field]).to.equal(null);
        await rejected(g.id, { [field]: [] }, new RegExp(field));
      });
    }

    it("replaces content_filter_builtins and removes them with null", async () => {
      const g = await createGuardrail(h.api, {
        content_filter_builtins: [
          { slug: "email", action: "redact" },
          { slug: "phone", action: "flag" },
        ],
      });
      const u = await update(g.id, {
        content_filter_builtins: [{ slug: "ssn", action: "block", label: "[NOT_MINE]" }],
      });
      expect(u.content_filter_builtins).to.deep.equal([
        { slug: "ssn", action: "block", label: "[SSN]" },
      ]);
      expect((await get(g.id)).content_filter_builtins).to.deep.equal(u.content_filter_builtins);
      expect(
        (await update(g.id, { content_filter_builtins: null })).content_filter_builtins,
      ).to.equal(null);
      expect((await get(g.id)).content_filter_builtins).to.equal(null);
    });

    it("replaces content_filters and removes them with null", async () => {
      const g = await createGuardrail(h.api, {
        content_filters: [
          { pattern: "one", action: "flag" },
          { pattern: "two", action: "block" },
        ],
      });
      const u = await update(g.id, { content_filters: [{ pattern: "three", action: "redact" }] });
      expect(u.content_filters).to.deep.equal([
        { pattern: "three", action: "redact", label: null },
      ]);
      expect((await update(g.id, { content_filters: null })).content_filters).to.equal(null);
      expect((await get(g.id)).content_filters).to.equal(null);
    });

    it("validates filters on update like on create, naming the field", async () => {
      const g = await createGuardrail(h.api, FULL);
      await rejected(
        g.id,
        { content_filters: [{ pattern: "(a)\\1", action: "block" }] },
        /content_filters\[0\]\.pattern/,
      );
      await rejected(
        g.id,
        { content_filters: [{ pattern: "(?=x)", action: "block" }] },
        /content_filters\[0\]\.pattern/,
      );
      await rejected(
        g.id,
        { content_filter_builtins: [{ slug: "dna", action: "block" }] },
        /content_filter_builtins\[0\]\.slug/,
      );
      await rejected(
        g.id,
        { content_filter_builtins: [{ slug: "phone", action: "flag", scan_scope: "user_only" }] },
        /scan_scope/,
      );
      await rejected(g.id, { allowed_data_regions: ["moon"] }, /allowed_data_regions\[0\]/);
    });
  });

  describe("name and description", () => {
    it("applies the create rules to name and description", async () => {
      const g = await createGuardrail(h.api);
      await rejected(g.id, { name: "" }, /name/);
      await rejected(g.id, { name: "  " }, /name/);
      await rejected(g.id, { name: null }, /name/);
      await rejected(g.id, { name: "n".repeat(201) }, /name/);
      await rejected(g.id, { description: "d".repeat(1001) }, /description/);
      expect((await update(g.id, { name: "ß".repeat(200) })).name).to.equal("ß".repeat(200));
      expect((await update(g.id, { description: "d".repeat(1000) })).description).to.have.length(
        1000,
      );
    });

    it("clears the description with null", async () => {
      const g = await createGuardrail(h.api, { description: "something" });
      expect((await update(g.id, { description: null })).description).to.equal("");
    });

    it("rejects a wrong type for a boolean field, naming it", async () => {
      const g = await createGuardrail(h.api);
      await rejected(g.id, { enable_paid_model_training: "no" }, /enable_paid_model_training/);
      await rejected(g.id, { enforce_zdr_google: 0 }, /enforce_zdr_google/);
    });
  });

  describe("limit_usd and reset_interval", () => {
    it("rejects an update that would leave only one of the pair", async () => {
      const both = await createGuardrail(h.api, { limit_usd: 10, reset_interval: "daily" });
      await rejected(both.id, { reset_interval: null }, /limit_usd and reset_interval/);
      await rejected(both.id, { limit_usd: null }, /limit_usd and reset_interval/);
      const neither = await createGuardrail(h.api);
      await rejected(neither.id, { limit_usd: 5 }, /limit_usd and reset_interval/);
      await rejected(neither.id, { reset_interval: "weekly" }, /limit_usd and reset_interval/);
    });

    it("changes either one alone while the other stays set", async () => {
      const g = await createGuardrail(h.api, { limit_usd: 10, reset_interval: "daily" });
      const a = await update(g.id, { limit_usd: 20 });
      expect([a.limit_usd, a.reset_interval]).to.deep.equal([20, "daily"]);
      const b = await update(g.id, { reset_interval: "monthly" });
      expect([b.limit_usd, b.reset_interval]).to.deep.equal([20, "monthly"]);
    });

    it("clears both when both are null, and sets both on a guardrail with neither", async () => {
      const g = await createGuardrail(h.api, { limit_usd: 10, reset_interval: "weekly" });
      const cleared = await update(g.id, { limit_usd: null, reset_interval: null });
      expect([cleared.limit_usd, cleared.reset_interval]).to.deep.equal([null, null]);
      expect((await get(g.id)).limit_usd).to.equal(null);
      const set = await update(g.id, { limit_usd: 3.5, reset_interval: "daily" });
      expect([set.limit_usd, set.reset_interval]).to.deep.equal([3.5, "daily"]);
    });

    it("rejects a negative limit and an unknown interval", async () => {
      const g = await createGuardrail(h.api, { limit_usd: 10, reset_interval: "daily" });
      await rejected(g.id, { limit_usd: -0.01 }, /limit_usd/);
      await rejected(g.id, { reset_interval: "hourly" }, /reset_interval/);
    });
  });

  describe("ZDR fields", () => {
    it("copies enforce_zdr into the per-vendor fields the PATCH does not set", async () => {
      const g = await createGuardrail(h.api);
      const u = await update(g.id, { enforce_zdr: true, enforce_zdr_google: false });
      expect(u.enforce_zdr).to.equal(null);
      expect(ZDR_VENDOR_FIELDS.map((f) => u[f])).to.deep.equal([true, true, false, true, true]);
      const stored = await get(g.id);
      expect(stored.enforce_zdr).to.equal(null);
      expect(ZDR_VENDOR_FIELDS.map((f) => stored[f])).to.deep.equal([
        true,
        true,
        false,
        true,
        true,
      ]);

      const off = await update(g.id, { enforce_zdr: false, enforce_zdr_other: true });
      expect(ZDR_VENDOR_FIELDS.map((f) => off[f])).to.deep.equal([
        false,
        false,
        false,
        false,
        true,
      ]);
    });

    it("leaves per-vendor fields alone when enforce_zdr is omitted or null", async () => {
      const g = await createGuardrail(h.api, {
        enforce_zdr_anthropic: true,
        enforce_zdr_xai: true,
      });
      const u = await update(g.id, { enforce_zdr_openai: true });
      expect(ZDR_VENDOR_FIELDS.map((f) => u[f])).to.deep.equal([true, true, false, true, false]);
      const n = await update(g.id, { enforce_zdr: null, enforce_zdr_other: true });
      expect(ZDR_VENDOR_FIELDS.map((f) => n[f])).to.deep.equal([true, true, false, true, true]);
      const d = await update(g.id, { description: "zdr untouched" });
      expect(ZDR_VENDOR_FIELDS.map((f) => d[f])).to.deep.equal([true, true, false, true, true]);
    });
  });

  describe("safety retention", () => {
    it("sets and resets (null = inherit) the two safety-retention fields", async () => {
      const g = await createGuardrail(h.api);
      const u = await update(g.id, {
        allow_safety_retention_google: false,
        allow_safety_retention_other: true,
      });
      expect([u.allow_safety_retention_google, u.allow_safety_retention_other]).to.deep.equal([
        false,
        true,
      ]);
      const n = await update(g.id, { allow_safety_retention_google: null });
      expect([n.allow_safety_retention_google, n.allow_safety_retention_other]).to.deep.equal([
        null,
        true,
      ]);
    });
  });

  describe("nullable fields and model aliases, as OpenRouter takes them", () => {
    it("takes null for a boolean as its default; enforce_zdr fills a vendor flag sent as null", async () => {
      const g = await createGuardrail(h.api, FULL);
      const u = await update(g.id, {
        enable_free_model_publication: null,
        enable_paid_model_training: null,
        include_byok_in_budgets: null,
        enforce_zdr_anthropic: null,
      });
      expect(u.enable_free_model_publication).to.equal(false);
      expect(u.enable_paid_model_training).to.equal(false);
      expect(u.include_byok_in_budgets).to.equal(false);
      expect(u.enforce_zdr_anthropic).to.equal(false);
      // Untouched fields stay as they were.
      expect([u.enforce_zdr_google, u.enforce_zdr_other]).to.deep.equal([true, true]);
      const z = await update(g.id, { enforce_zdr: true, enforce_zdr_openai: null });
      expect(z.enforce_zdr_openai).to.equal(true);
      expect(z.enforce_zdr_xai).to.equal(true);
    });

    it("accepts [] for the filter lists: no filters", async () => {
      const g = await createGuardrail(h.api, FULL);
      const u = await update(g.id, { content_filter_builtins: [], content_filters: [] });
      expect([u.content_filter_builtins, u.content_filters]).to.deep.equal([null, null]);
    });

    it("stores model aliases as canonical ids", async () => {
      const g = await createGuardrail(h.api);
      const u = await update(g.id, {
        allowed_models: ["espeak-ng", "tts-1", "railgate/espeak-ng", "someone/else"],
        ignored_models: ["gpt-4o-mini-tts"],
      });
      expect(u.allowed_models).to.deep.equal([
        "railgate/espeak-ng",
        "openai/tts-1",
        "someone/else",
      ]);
      expect(u.ignored_models).to.deep.equal(["openai/gpt-4o-mini-tts"]);
      expect((await get(g.id)).allowed_models).to.deep.equal(u.allowed_models);
    });
  });

  describe("what cannot be updated", () => {
    it("rejects workspace_id with 400 and keeps the workspace", async () => {
      const ws = await createWorkspace(h.api);
      const g = await createGuardrail(h.api);
      await rejected(g.id, { workspace_id: ws.id }, /workspace_id/);
      await rejected(g.id, { workspace_id: g.workspace_id, name: "same ws" }, /workspace_id/);
    });

    it("rejects an empty body", async () => {
      const g = await createGuardrail(h.api);
      await rejected(g.id, {}, /empty/);
    });

    it("answers 404 for an unknown id and 400 for a non-UUID id", async () => {
      expectError(await patch(randomUUID(), { name: "ghost" }), 404, /not found/);
      expectError(await patch("not-a-uuid", { name: "ghost" }), 400, /id/);
    });

    it("answers 404 for a deleted guardrail", async () => {
      const g = await createGuardrail(h.api);
      expectStatus(await h.api.delete(`/api/v1/guardrails/${g.id}`), 200);
      expectError(await patch(g.id, { name: "back?" }), 404);
      expectError(await h.api.get(`/api/v1/guardrails/${g.id}`), 404);
    });
  });
});
