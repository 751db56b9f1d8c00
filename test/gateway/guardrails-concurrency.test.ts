import { expect } from "chai";
import {
  createGuardrail,
  expectError,
  expectGuardrail,
  expectStatus,
  useSystem,
} from "./harness.js";

/**
 * Twenty PATCHes, each changing a different field away from its initial
 * value. Whatever the interleaving, the stored guardrail must end up with
 * exactly the changes whose PATCH answered 200 (none lost) and none of those
 * that answered 409 (no half-applied conflict).
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

  it("loses no write: each 200 change holds, each 409 change is absent, the record stays valid", async () => {
    expect(CHANGES).to.have.length(20);
    const g = await createGuardrail(h.api, INITIAL);
    // Readers race the writers: every read in between sees a whole, valid guardrail.
    const [results, reads] = await Promise.all([
      Promise.all(CHANGES.map((body) => h.api.patch(`/api/v1/guardrails/${g.id}`, body))),
      Promise.all(CHANGES.map(() => h.api.get(`/api/v1/guardrails/${g.id}`))),
    ]);
    for (const read of reads) {
      expectStatus(read, 200);
      expectGuardrail(read.body.data);
    }

    const applied: Record<string, unknown>[] = [];
    for (const [i, res] of results.entries()) {
      expect(res.status, `PATCH ${JSON.stringify(CHANGES[i])}`).to.be.oneOf([200, 409]);
      if (res.status === 200) {
        expectGuardrail(res.body.data);
        applied.push(CHANGES[i] as Record<string, unknown>);
      } else {
        expectError(res, 409, /retry/i);
      }
    }
    expect(applied.length, "at least one PATCH succeeds").to.be.greaterThan(0);

    const read = await h.api.get(`/api/v1/guardrails/${g.id}`);
    expectStatus(read, 200);
    const final = read.body.data;
    expectGuardrail(final);
    expect(final.id).to.equal(g.id);
    expect(final.created_at).to.equal(g.created_at);
    expect(final.updated_at).to.be.a("string");

    for (const change of CHANGES) {
      const won = applied.includes(change);
      for (const [field, value] of Object.entries(change)) {
        const want = won ? readBack(field, value) : g[field];
        expect(final[field], `${field} (${won ? "200" : "409"})`).to.deep.equal(want);
      }
    }
  });

  it("keeps every response a complete guardrail under repeated races on the same field", async () => {
    const g = await createGuardrail(h.api);
    const lists = Array.from({ length: 20 }, (_, i) => [`model/${i}`, `model/${i}-b`]);
    const results = await Promise.all(
      lists.map((allowed_models) => h.api.patch(`/api/v1/guardrails/${g.id}`, { allowed_models })),
    );
    const winners = results.filter((r) => r.status === 200);
    for (const r of results) expect(r.status).to.be.oneOf([200, 409]);
    for (const r of winners) expectGuardrail(r.body.data);
    const final = (await h.api.get(`/api/v1/guardrails/${g.id}`)).body.data;
    expectGuardrail(final);
    // The last writer wins with one of the lists that answered 200, whole (replace, never a merge).
    const sent = results
      .map((r, i) => (r.status === 200 ? lists[i] : undefined))
      .filter((l) => l !== undefined);
    expect(sent).to.deep.include(final.allowed_models);
  });
});
