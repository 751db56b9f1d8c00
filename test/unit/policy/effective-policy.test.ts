import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  FilterAction,
  type Guardrail,
  GuardrailSchema,
  Region,
  ResetInterval,
  ScanScope,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { effectivePolicy } from "../../../governance/policy/effective-policy.js";
import type {
  AccountSettings,
  GoverningGuardrail,
  GuardrailSource,
} from "../../../governance/policy/types.js";

const OPEN: AccountSettings = { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true };

let n = 0;
function g(
  init: MessageInitShape<typeof GuardrailSchema> = {},
  source: GuardrailSource = "key",
): GoverningGuardrail {
  n++;
  const guardrail: Guardrail = create(GuardrailSchema, {
    id: `g${n}`,
    name: `guardrail ${n}`,
    workspaceId: "ws",
    ...init,
  });
  return { source, guardrail };
}

const list = (...values: string[]) => ({ values });
const regions = (...values: Region[]) => ({ values });
const sorted = (s: ReadonlySet<string> | null) => (s ? [...s].sort() : s);

describe("effective policy (the guardrail algebra)", () => {
  describe("with no guardrail", () => {
    const p = effectivePolicy([], OPEN);

    it("restricts nothing", () => {
      expect(p.regions).to.equal(null);
      expect(p.allowedModels).to.equal(null);
      expect(p.allowedProviders).to.equal(null);
      expect([...p.ignoredModels]).to.deep.equal([]);
      expect([...p.ignoredProviders]).to.deep.equal([]);
      expect(Object.values(p.zdr)).to.deep.equal([false, false, false, false, false]);
      expect(p.enableFreeModelPublication).to.equal(true);
      expect(p.enableFreeModelTraining).to.equal(true);
      expect(p.enablePaidModelTraining).to.equal(true);
      expect(p.filters).to.deep.equal([]);
      expect(p.budgets).to.deep.equal([]);
    });

    it("keeps the account's safety-retention settings", () => {
      expect(p.allowSafetyRetentionGoogle).to.equal(true);
      const closed = effectivePolicy([], {
        allowSafetyRetentionGoogle: false,
        allowSafetyRetentionOther: false,
      });
      expect(closed.allowSafetyRetentionGoogle).to.equal(false);
      expect(closed.allowSafetyRetentionOther).to.equal(false);
    });
  });

  describe("regions", () => {
    it("intersect over the non-null values only", () => {
      const p = effectivePolicy(
        [
          g({ allowedDataRegions: regions(Region.EUROPE, Region.GLOBAL) }, "key"),
          g({}, "member"),
          g({ allowedDataRegions: regions(Region.EUROPE, Region.US) }, "workspace_default"),
        ],
        OPEN,
      );
      expect(sorted(p.regions)).to.deep.equal(["europe"]);
    });

    it("are unrestricted (null) when every guardrail leaves them null", () => {
      expect(effectivePolicy([g(), g({}, "workspace_default")], OPEN).regions).to.equal(null);
    });

    it("are the one non-null value when only one guardrail sets them", () => {
      const p = effectivePolicy(
        [g(), g({ allowedDataRegions: regions(Region.US) }, "member")],
        OPEN,
      );
      expect(sorted(p.regions)).to.deep.equal(["us"]);
    });

    it("are empty, not unrestricted, when the sets are disjoint", () => {
      const p = effectivePolicy(
        [
          g({ allowedDataRegions: regions(Region.EUROPE) }),
          g({ allowedDataRegions: regions(Region.US) }, "workspace_default"),
        ],
        OPEN,
      );
      expect(p.regions).to.not.equal(null);
      expect(sorted(p.regions)).to.deep.equal([]);
    });
  });

  describe("allow-lists and ignore-lists", () => {
    it("allowed_models and allowed_providers intersect over non-null values", () => {
      const p = effectivePolicy(
        [
          g({ allowedModels: list("a/x", "a/y"), allowedProviders: list("p1", "p2") }),
          g({ allowedModels: list("a/y", "a/z") }, "member"),
          g({ allowedProviders: list("p2", "p3") }, "workspace_default"),
        ],
        OPEN,
      );
      expect(sorted(p.allowedModels)).to.deep.equal(["a/y"]);
      expect(sorted(p.allowedProviders)).to.deep.equal(["p2"]);
    });

    it("allowed lists stay null when no guardrail sets them", () => {
      const p = effectivePolicy([g({ ignoredModels: list("a/x") })], OPEN);
      expect(p.allowedModels).to.equal(null);
      expect(p.allowedProviders).to.equal(null);
    });

    it("ignored_models and ignored_providers union", () => {
      const p = effectivePolicy(
        [
          g({ ignoredModels: list("a/x"), ignoredProviders: list("p1") }),
          g({ ignoredModels: list("a/y", "a/x"), ignoredProviders: list("p2") }, "member"),
          g({}, "workspace_default"),
        ],
        OPEN,
      );
      expect(sorted(p.ignoredModels)).to.deep.equal(["a/x", "a/y"]);
      expect(sorted(p.ignoredProviders)).to.deep.equal(["p1", "p2"]);
    });
  });

  describe("zero data retention", () => {
    it("ORs each vendor's flag separately", () => {
      const p = effectivePolicy(
        [
          g({ enforceZdrOpenai: true }),
          g({ enforceZdrGoogle: true, enforceZdrOther: true }, "workspace_default"),
        ],
        OPEN,
      );
      expect(p.zdr).to.deep.equal({
        anthropic: false,
        openai: true,
        google: true,
        xai: false,
        other: true,
      });
    });

    it("a guardrail that does not enforce cannot switch another's ZDR off", () => {
      const p = effectivePolicy(
        [g({ enforceZdrXai: true }), g({ enforceZdrXai: false }, "member")],
        OPEN,
      );
      expect(p.zdr.xai).to.equal(true);
    });
  });

  describe("training and publication permissions", () => {
    for (const field of [
      "enableFreeModelTraining",
      "enablePaidModelTraining",
      "enableFreeModelPublication",
    ] as const) {
      it(`${field}: AND over the guardrails (one false refuses)`, () => {
        expect(
          effectivePolicy([g({ [field]: true }), g({ [field]: true }, "member")], OPEN)[field],
        ).to.equal(true);
        expect(
          effectivePolicy([g({ [field]: true }), g({ [field]: false }, "workspace_default")], OPEN)[
            field
          ],
        ).to.equal(false);
        expect(effectivePolicy([g({ [field]: true })], OPEN)[field]).to.equal(true);
        expect(effectivePolicy([g()], OPEN)[field]).to.equal(false);
      });
    }
  });

  describe("safety retention", () => {
    it("null inherits the account setting", () => {
      expect(effectivePolicy([g()], OPEN).allowSafetyRetentionGoogle).to.equal(true);
      expect(
        effectivePolicy([g()], {
          allowSafetyRetentionGoogle: false,
          allowSafetyRetentionOther: true,
        }).allowSafetyRetentionGoogle,
      ).to.equal(false);
    });

    it("the most restrictive value wins", () => {
      const p = effectivePolicy(
        [
          g({ allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: false }),
          g({ allowSafetyRetentionGoogle: false }, "workspace_default"),
        ],
        OPEN,
      );
      expect(p.allowSafetyRetentionGoogle).to.equal(false);
      expect(p.allowSafetyRetentionOther).to.equal(false);
    });

    it("a guardrail cannot be less restrictive than the account", () => {
      const p = effectivePolicy(
        [g({ allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true })],
        { allowSafetyRetentionGoogle: false, allowSafetyRetentionOther: false },
      );
      expect(p.allowSafetyRetentionGoogle).to.equal(false);
      expect(p.allowSafetyRetentionOther).to.equal(false);
    });

    it("google and other are independent", () => {
      const p = effectivePolicy([g({ allowSafetyRetentionOther: false })], OPEN);
      expect(p.allowSafetyRetentionGoogle).to.equal(true);
      expect(p.allowSafetyRetentionOther).to.equal(false);
    });
  });

  describe("content filters", () => {
    it("union every guardrail's builtins and custom patterns, each with its guardrail", () => {
      const a = g({
        contentFilterBuiltins: {
          values: [
            { slug: "email", action: FilterAction.BLOCK },
            {
              slug: "regex-prompt-injection",
              action: FilterAction.FLAG,
              scanScope: ScanScope.USER_ONLY,
            },
          ],
        },
      });
      const b = g(
        {
          contentFilterBuiltins: { values: [{ slug: "email", action: FilterAction.REDACT }] },
          contentFilters: {
            values: [{ pattern: "secret-\\d+", action: FilterAction.REDACT, label: "[SECRET]" }],
          },
        },
        "workspace_default",
      );
      const p = effectivePolicy([a, b], OPEN);
      expect(p.filters.map((f) => [f.slug, f.action, f.guardrailId])).to.deep.equal([
        ["email", "block", a.guardrail.id],
        ["regex-prompt-injection", "flag", a.guardrail.id],
        ["email", "redact", b.guardrail.id],
        ["custom", "redact", b.guardrail.id],
      ]);
      expect(p.filters[1]?.scanScope).to.equal("user_only");
      expect(p.filters[3]).to.include({ pattern: "secret-\\d+", label: "[SECRET]" });
    });
  });

  describe("budgets", () => {
    it("one per guardrail with a limit, each its own", () => {
      const a = g({
        limitUsd: 5,
        resetInterval: ResetInterval.DAILY,
        includeByokInBudgets: true,
      });
      const b = g({}, "member");
      const c = g({ limitUsd: 0, resetInterval: ResetInterval.MONTHLY }, "workspace_default");
      const p = effectivePolicy([a, b, c], OPEN);
      expect(p.budgets).to.deep.equal([
        {
          guardrailId: a.guardrail.id,
          guardrailName: a.guardrail.name,
          source: "key",
          limitUsd: 5,
          interval: "daily",
          includeByok: true,
        },
        {
          guardrailId: c.guardrail.id,
          guardrailName: c.guardrail.name,
          source: "workspace_default",
          limitUsd: 0,
          interval: "monthly",
          includeByok: false,
        },
      ]);
    });

    it("keeps the governing guardrails and their sources", () => {
      const gs = [g({}, "key"), g({}, "member"), g({}, "workspace_default")];
      expect(effectivePolicy(gs, OPEN).guardrails.map((x) => x.source)).to.deep.equal([
        "key",
        "member",
        "workspace_default",
      ]);
    });
  });
});
