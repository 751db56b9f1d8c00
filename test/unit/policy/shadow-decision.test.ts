import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import { ModelCatalog } from "../../../domain/catalog/model-catalog.js";
import {
  FilterAction,
  GuardrailSchema,
  Region,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { sharedCompiledFilters } from "../../../governance/filters/index.js";
import { effectivePolicy } from "../../../governance/policy/effective-policy.js";
import { decideUnderShadow } from "../../../governance/shadow-decision.js";
import { loadCatalog } from "../../../services/speech/catalog/load-catalog.js";

const catalog = new ModelCatalog(loadCatalog({ openAi: {} }), []);
const account = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };
const engine = catalog.find("railgate/espeak-ng");

/** A shadow of a guardrail that redacts e-mail addresses (and allows only `regions`, when given). */
function shadowOf(regions?: Region[]) {
  const g = create(GuardrailSchema, {
    contentFilterBuiltins: { values: [{ slug: "email", action: FilterAction.REDACT }] },
    ...(regions ? { allowedDataRegions: { values: regions } } : {}),
  });
  const policy = effectivePolicy([{ source: "key", guardrail: g }], account);
  return {
    guardrailId: "g",
    expiresAtMs: Number.MAX_SAFE_INTEGER,
    policy,
    filters: sharedCompiledFilters.get(policy.filters),
  };
}

describe("deciding a request under a running shadow", () => {
  if (!engine) throw new Error("the built-in catalog has no railgate/espeak-ng");
  const request = (text: string) => ({
    model: engine,
    segments: [{ text, voice: "alloy" }],
    references: [],
    zdr: false,
    region: "global" as const,
  });

  it("filters the text itself when the live filters are other ones", async () => {
    const shadow = shadowOf();
    const other = sharedCompiledFilters.get([]);
    const live = { filters: other, decision: { outcome: "allowed" as const, reason: "" } };
    const decided = await decideUnderShadow(shadow, request("mail x@example.com"), undefined, live);
    expect(decided.outcome).to.equal("redacted");
    expect((await decideUnderShadow(shadow, request("nothing here"))).outcome).to.equal("allowed");
  });

  it("takes the live filters' result when its filters are the same set, without filtering again", async () => {
    const shadow = shadowOf();
    // Same rules, so the same compiled set: the live result stands, whatever the text holds.
    const live = { filters: shadow.filters, decision: { outcome: "flagged" as const, reason: "" } };
    const decided = await decideUnderShadow(shadow, request("nothing here"), undefined, live);
    expect(decided.outcome).to.equal("flagged");
  });

  it("decides its own rules before any filter: a region left out refuses", async () => {
    const shadow = shadowOf([Region.EUROPE]);
    const live = { filters: shadow.filters, decision: { outcome: "allowed" as const, reason: "" } };
    const decided = await decideUnderShadow(shadow, request("nothing here"), undefined, live);
    expect(decided).to.deep.equal({
      outcome: "refused",
      reason: "region global is not in allowed_data_regions",
    });
  });
});
