import { expect } from "chai";
import { effectivePolicy } from "../../../governance/policy/effective-policy.js";
import {
  governingPolicies,
  policyAsGuardrail,
} from "../../../governance/policy/policy-guardrails.js";
import {
  assignmentState,
  changedAssignment,
  overridden,
  sameState,
} from "../../../store/policies/policy-doc.js";
import type { PolicyDoc, StoredPolicy } from "../../../store/policies/types.js";

function policy(id: string, over: Partial<StoredPolicy> = {}): StoredPolicy {
  return {
    id,
    workspaceId: "ws",
    policyType: "budget",
    name: id,
    config: { limit_usd: 1, reset_interval: "daily", include_byok_in_budgets: false },
    apiKeyHashes: [],
    memberIds: [],
    isWorkspaceDefault: false,
    optedOutApiKeyHashes: [],
    optedOutMemberIds: [],
    updatedAtMs: 0,
    ...over,
  };
}

const ACCOUNT = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };

describe("unit: guardrail policy documents", () => {
  it("a subject inherits the default unless it opted out or holds a policy of the type", () => {
    const doc: PolicyDoc = {
      policies: [
        policy("default", { isWorkspaceDefault: true, optedOutApiKeyHashes: ["out"] }),
        policy("own", { apiKeyHashes: ["mine"] }),
        policy("models", { policyType: "model_availability", config: {}, apiKeyHashes: ["plain"] }),
      ],
    };
    expect(assignmentState(doc, "budget", "api_key", "plain")).to.deep.equal({
      optedOut: false,
      policyIds: [],
      workspaceDefaultPolicyIds: ["default"],
    });
    expect(
      assignmentState(doc, "budget", "api_key", "out").workspaceDefaultPolicyIds,
    ).to.deep.equal([]);
    expect(assignmentState(doc, "budget", "api_key", "out").optedOut).to.equal(true);
    expect(assignmentState(doc, "budget", "api_key", "mine")).to.deep.equal({
      optedOut: false,
      policyIds: ["own"],
      workspaceDefaultPolicyIds: [],
    });
    expect(overridden(doc, doc.policies[0] as StoredPolicy, "api_key")).to.deep.equal(["mine"]);
  });

  it("compares states as sets, and assigning moves a subject off its other policy of the type", () => {
    expect(
      sameState(
        { optedOut: false, policyIds: ["a", "b"], workspaceDefaultPolicyIds: [] },
        { optedOut: false, policyIds: ["b", "a"], workspaceDefaultPolicyIds: [] },
      ),
    ).to.equal(true);
    expect(
      sameState(
        { optedOut: false, policyIds: ["a"], workspaceDefaultPolicyIds: [] },
        { optedOut: true, policyIds: ["a"], workspaceDefaultPolicyIds: [] },
      ),
    ).to.equal(false);
    const a = policy("a", { memberIds: ["m"] });
    const b = policy("b");
    const next = changedAssignment({ policies: [a, b] }, b, "member", "m", true, 5);
    expect(next.policies.map((p) => p.memberIds)).to.deep.equal([[], ["m"]]);
    // Unchanged policies stay the same objects: the caller tells "nothing changed" by identity.
    const same = changedAssignment(next, b, "member", "m", true, 6);
    expect(same.policies.every((p, i) => p === next.policies[i])).to.equal(true);
  });

  it("a policy folds in as a guardrail holding only its settings", () => {
    const budget = policyAsGuardrail(policy("b"));
    const folded = effectivePolicy([{ source: "key", guardrail: budget }], ACCOUNT);
    // A budget policy takes no model permission away (a guardrail's false would).
    expect(folded.enableFreeModelTraining).to.equal(true);
    expect(folded.allowedModels).to.equal(null);
    expect(folded.budgets).to.have.length(1);
    const models = policyAsGuardrail(
      policy("m", {
        policyType: "model_availability",
        config: { allowed_models: ["x/y"], require_eu_data_region: true, enforce_zdr: true },
      }),
    );
    const both = effectivePolicy(
      [
        { source: "key", guardrail: budget },
        { source: "workspace_default", guardrail: models },
      ],
      ACCOUNT,
    );
    expect([...(both.allowedModels ?? [])]).to.deep.equal(["x/y"]);
    expect([...(both.regions ?? [])]).to.deep.equal(["europe"]);
    expect(both.zdr).to.deep.equal({
      anthropic: true,
      openai: true,
      google: true,
      xai: true,
      other: true,
    });
  });

  it("governs a key by its own policies, its member's and the defaults it inherits", () => {
    const doc: PolicyDoc = {
      policies: [
        policy("default", { isWorkspaceDefault: true }),
        policy("member", { policyType: "moderation", config: {}, memberIds: ["ann"] }),
        policy("key", { policyType: "model_availability", config: {}, apiKeyHashes: ["k"] }),
      ],
    };
    const governing = governingPolicies(doc, "k", "ann").map((g) => [g.source, g.guardrail.id]);
    expect(governing).to.have.deep.members([
      ["workspace_default", "default"],
      ["member", "member"],
      ["key", "key"],
    ]);
    expect(governingPolicies(doc, "other", "").map((g) => g.guardrail.id)).to.deep.equal([
      "default",
    ]);
  });
});
