import { expect } from "chai";
import { expectStatus } from "../kit/expect.js";
import { createGuardrail, expectGuardrail, useSystem } from "../kit/gateway-harness.js";

/**
 * Forty PATCHes at once: nineteen each changing a different field away from
 * its initial value, twenty-one racing on the same field. The store applies
 * each PATCH's fields alone, atomically, so none conflicts: every one answers
 * 200, the stored guardrail holds every different-field change (none lost)
 * and one of the same-field values whole.
 */
const INITIAL = {
  description: "initial",
  allowed_data_regions: ["global"],
  allowed_models: ["initial/model"],
  allowed_providers: ["initial-provider"],
  ignored_models: ["initial/ignored"],
  ignored_providers: ["initial-ignored"],
  content_filter_builtins: [{ slug: "email", action: "flag" }],
  content_filters: [{ pattern: "initial", action: "flag" }],
  enable_free_model_publication: false,
  enable_free_model_training: false,
  enable_paid_model_training: false,
  enforce_zdr_anthropic: false,
  enforce_zdr_openai: false,
  enforce_zdr_google: false,
  enforce_zdr_xai: false,
  enforce_zdr_other: false,
  allow_safety_retention_google: null,
  allow_safety_retention_other: null,
  include_byok_in_budgets: false,
  limit_usd: 1,
  reset_interval: "daily",
};

const CHANGES: Record<string, unknown>[] = [
  { name: "Changed name" },
  { description: "changed" },
  { allowed_data_regions: ["europe", "us"] },
  { allowed_models: ["changed/one", "changed/two"] },
  { allowed_providers: ["changed-provider"] },
  { ignored_models: ["changed/ignored"] },
  { ignored_providers: ["changed-ignored"] },
  { content_filter_builtins: [{ slug: "ssn", action: "redact" }] },
  { content_filters: [{ pattern: "changed", action: "block", label: "[C]" }] },
  { enable_free_model_publication: true },
  { enable_free_model_training: true },
  { enable_paid_model_training: true },
  { enforce_zdr_anthropic: true },
  { enforce_zdr_openai: true },
  { enforce_zdr_google: true },
  { enforce_zdr_xai: true },
  { enforce_zdr_other: true },
  { allow_safety_retention_google: false },
  { allow_safety_retention_other: true },
  { include_byok_in_budgets: true, limit_usd: 99, reset_interval: "monthly" },
];

/** How a change reads back: a builtin gains its fixed label; everything else reads as sent. */
function readBack(field: string, value: unknown): unknown {
  return field === "content_filter_builtins"
    ? [{ slug: "ssn", action: "redact", label: "[SSN]" }]
    : value;
}

describe("gateway: concurrent PATCHes to one guardrail", () => {
  const h = useSystem();

  it("answers 200 to 40 concurrent PATCHes of different fields and of one field, and loses no write", async () => {
    const different = CHANGES.filter((c) => !("description" in c));
    const same = Array.from({ length: 40 - different.length }, (_, i) => ({
      description: `racing ${i}`,
    }));
    expect(different).to.have.length(19);
    const g = await createGuardrail(h.api, INITIAL);
    const bodies = [...different, ...same];
    // Readers race the writers: every read in between sees a whole, valid guardrail.
    const [results, reads] = await Promise.all([
      Promise.all(bodies.map((body) => h.api.patch(`/api/v1/guardrails/${g.id}`, body))),
      Promise.all(bodies.map(() => h.api.get(`/api/v1/guardrails/${g.id}`))),
    ]);
    for (const read of reads) {
      expectStatus(read, 200);
      expectGuardrail(read.body.data);
    }
    for (const [i, res] of results.entries()) {
      expect(
        res.status,
        `PATCH ${JSON.stringify(bodies[i])}: ${JSON.stringify(res.body)}`,
      ).to.equal(200);
      expectGuardrail(res.body.data);
      // Each response carries at least its own change.
      for (const [field, value] of Object.entries(bodies[i] as Record<string, unknown>)) {
        if (field !== "description")
          expect(res.body.data[field]).to.deep.equal(readBack(field, value));
      }
    }

    const read = await h.api.get(`/api/v1/guardrails/${g.id}`);
    expectStatus(read, 200);
    const final = read.body.data;
    expectGuardrail(final);
    expect(final.id).to.equal(g.id);
    expect(final.created_at).to.equal(g.created_at);
    expect(final.updated_at).to.be.a("string");
    for (const change of different) {
      for (const [field, value] of Object.entries(change)) {
        expect(final[field], field).to.deep.equal(readBack(field, value));
      }
    }
    expect(same.map((c) => c.description)).to.include(final.description);
  });

  it("answers 200 to 40 concurrent PATCHes of one list, which is replaced whole, never merged", async () => {
    const g = await createGuardrail(h.api);
    const lists = Array.from({ length: 40 }, (_, i) => [`model/${i}`, `model/${i}-b`]);
    const results = await Promise.all(
      lists.map((allowed_models) => h.api.patch(`/api/v1/guardrails/${g.id}`, { allowed_models })),
    );
    for (const r of results) {
      expectStatus(r, 200);
      expectGuardrail(r.body.data);
    }
    const final = (await h.api.get(`/api/v1/guardrails/${g.id}`)).body.data;
    expectGuardrail(final);
    expect(lists).to.deep.include(final.allowed_models);
  });

  it("answers 200 to 40 concurrent PATCHes of limit_usd alone, each checked against the stored reset_interval", async () => {
    const g = await createGuardrail(h.api, { limit_usd: 1, reset_interval: "daily" });
    const limits = Array.from({ length: 40 }, (_, i) => i + 2);
    const results = await Promise.all(
      limits.map((limit_usd) => h.api.patch(`/api/v1/guardrails/${g.id}`, { limit_usd })),
    );
    for (const r of results) expectStatus(r, 200);
    const final = (await h.api.get(`/api/v1/guardrails/${g.id}`)).body.data;
    expect(limits).to.include(final.limit_usd);
    expect(final.reset_interval).to.equal("daily");
  });

  it("never stores a budget without its interval when PATCHes of limit_usd race its removal", async () => {
    const g = await createGuardrail(h.api, { limit_usd: 1, reset_interval: "daily" });
    const bodies = [
      ...Array.from({ length: 10 }, (_, i) => ({ limit_usd: i + 2 })),
      { limit_usd: null, reset_interval: null },
    ];
    const results = await Promise.all(
      bodies.map((body) => h.api.patch(`/api/v1/guardrails/${g.id}`, body)),
    );
    // A limit_usd PATCH that lands after the removal is refused by the rule (400), never stored.
    for (const r of results) expect(r.status).to.be.oneOf([200, 400]);
    const final = (await h.api.get(`/api/v1/guardrails/${g.id}`)).body.data;
    expectGuardrail(final);
    expect(final.limit_usd === null).to.equal(final.reset_interval === null);
  });
});
