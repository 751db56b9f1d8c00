import { create } from "@bufbuild/protobuf";
import { expect } from "chai";
import {
  FilterAction,
  GuardrailInputSchema,
  GuardrailSchema,
  ResetInterval,
  StringListSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../../platform/time.js";
import {
  applyUpdateMask,
  fieldsWritten,
  guardrailFromInput,
  UPDATABLE_PATHS,
} from "../../../services/guardrail/update-mask.js";
import { fieldsReadTogether } from "../../../services/guardrail/validation.js";
import { encodeField, VERSION_FIELD } from "../../../store/guardrail-fields.js";

const now = nowTimestamp();
const base = () =>
  guardrailFromInput(
    create(GuardrailInputSchema, {
      name: "base",
      description: "keep me",
      allowedModels: create(StringListSchema, { values: ["openai/a"] }),
      includeByokInBudgets: true,
      limitUsd: 10,
      resetInterval: ResetInterval.DAILY,
      contentFilterBuiltins: {
        values: [{ slug: "email", action: FilterAction.REDACT, label: "ignored" }],
      },
    }),
    "id",
    "ws",
    now,
  );

describe("guardrailFromInput", () => {
  it("defaults booleans to false and sets the builtin label from the slug", () => {
    const g = base();
    expect(g.enableFreeModelTraining).to.equal(false);
    expect(g.enforceZdrOther).to.equal(false);
    expect(g.contentFilterBuiltins?.values[0]?.label).to.equal("[EMAIL]");
    expect(g.updatedAt).to.equal(undefined);
  });

  it("copies enforce_zdr into the per-vendor flags the request leaves unset", () => {
    const g = guardrailFromInput(
      create(GuardrailInputSchema, { name: "z", enforceZdr: true, enforceZdrGoogle: false }),
      "id",
      "ws",
      now,
    );
    expect([
      g.enforceZdrAnthropic,
      g.enforceZdrOpenai,
      g.enforceZdrGoogle,
      g.enforceZdrXai,
      g.enforceZdrOther,
    ]).to.deep.equal([true, true, false, true, true]);
  });
});

describe("applyUpdateMask", () => {
  it("leaves fields outside the mask unchanged, including include_byok_in_budgets", () => {
    const next = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, { name: "new" }),
      ["name"],
      now,
    );
    expect(next.name).to.equal("new");
    expect(next.description).to.equal("keep me");
    expect(next.includeByokInBudgets).to.equal(true);
    expect(next.allowedModels?.values).to.deep.equal(["openai/a"]);
    expect(next.updatedAt).to.deep.equal(now);
  });

  it("treats a masked list without a value as null, and a value as a full replacement", () => {
    const cleared = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, {}),
      ["allowed_models", "content_filter_builtins"],
      now,
    );
    expect(cleared.allowedModels).to.equal(undefined);
    expect(cleared.contentFilterBuiltins).to.equal(undefined);
    const replaced = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, { allowedModels: { values: ["x/y", "x/z"] } }),
      ["allowed_models"],
      now,
    );
    expect(replaced.allowedModels?.values).to.deep.equal(["x/y", "x/z"]);
  });

  it("applies enforce_zdr only to per-vendor flags not in the mask", () => {
    const next = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, { enforceZdr: true, enforceZdrOpenai: false }),
      ["enforce_zdr", "enforce_zdr_openai"],
      now,
    );
    expect(next.enforceZdrOpenai).to.equal(false);
    expect(next.enforceZdrAnthropic).to.equal(true);
    expect(next.enforceZdrOther).to.equal(true);
  });

  it("reads null as the default for booleans; enforce_zdr fills a vendor flag sent as null", () => {
    const current = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, { enableFreeModelTraining: true, enforceZdrXai: true }),
      ["enable_free_model_training", "enforce_zdr_xai"],
      now,
    );
    expect([current.enableFreeModelTraining, current.enforceZdrXai]).to.deep.equal([true, true]);
    const nulled = applyUpdateMask(
      current,
      create(GuardrailInputSchema, {}),
      ["enable_free_model_training", "enforce_zdr_xai", "include_byok_in_budgets"],
      now,
    );
    expect(nulled.enableFreeModelTraining).to.equal(false);
    expect(nulled.enforceZdrXai).to.equal(false);
    expect(nulled.includeByokInBudgets).to.equal(false);
    const filled = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, { enforceZdr: true }),
      ["enforce_zdr", "enforce_zdr_google"],
      now,
    );
    expect(filled.enforceZdrGoogle).to.equal(true);
  });

  it("stores an empty filter list as null (no filters)", () => {
    const next = applyUpdateMask(
      base(),
      create(GuardrailInputSchema, {
        contentFilterBuiltins: { values: [] },
        contentFilters: { values: [] },
      }),
      ["content_filter_builtins", "content_filters"],
      now,
    );
    expect(next.contentFilterBuiltins).to.equal(undefined);
    expect(next.contentFilters).to.equal(undefined);
  });

  it("does not mutate the current record", () => {
    const current = base();
    applyUpdateMask(
      current,
      create(GuardrailInputSchema, { name: "other" }),
      ["name", "allowed_models"],
      now,
    );
    expect(current.name).to.equal("base");
    expect(current.allowedModels?.values).to.deep.equal(["openai/a"]);
  });
});

describe("fieldsWritten: what the store must write for a mask", () => {
  /** A value for every updatable path, different from base()'s. */
  const input = create(GuardrailInputSchema, {
    name: "other",
    description: "other",
    enforceZdr: true,
    allowedDataRegions: { values: [1] },
    allowedModels: { values: ["x/y"] },
    allowedProviders: { values: ["p"] },
    ignoredModels: { values: ["i/m"] },
    ignoredProviders: { values: ["ip"] },
    contentFilterBuiltins: { values: [{ slug: "ssn", action: FilterAction.FLAG }] },
    contentFilters: { values: [{ pattern: "x", action: FilterAction.BLOCK }] },
    enableFreeModelPublication: true,
    enableFreeModelTraining: true,
    enablePaidModelTraining: true,
    enforceZdrAnthropic: true,
    enforceZdrOpenai: true,
    enforceZdrGoogle: true,
    enforceZdrXai: true,
    enforceZdrOther: true,
    includeByokInBudgets: false,
    allowSafetyRetentionGoogle: false,
    allowSafetyRetentionOther: true,
    limitUsd: 3,
    resetInterval: ResetInterval.WEEKLY,
  });

  it("covers every field applyUpdateMask changes, for each updatable path alone and for enforce_zdr with a vendor", () => {
    const later = { ...now, seconds: now.seconds + 1n };
    const masks = [...UPDATABLE_PATHS].map((p) => [p]);
    masks.push(["enforce_zdr", "enforce_zdr_anthropic"]);
    for (const paths of masks) {
      const before = base();
      const after = applyUpdateMask(before, input, paths, later);
      const written = fieldsWritten(input, paths);
      const changed = GuardrailSchema.fields
        .filter((f) => f.number !== VERSION_FIELD)
        .filter((f) => !equals(encodeField(before, f.number), encodeField(after, f.number)))
        .map((f) => f.name);
      expect(changed.length, paths.join()).to.be.greaterThan(0);
      for (const f of changed) expect(written, `${paths.join()} changes ${f}`).to.include(f);
    }
    expect(fieldsWritten(input, ["enforce_zdr", "enforce_zdr_anthropic"]).sort()).to.deep.equal(
      [
        "enforce_zdr_anthropic",
        "enforce_zdr_google",
        "enforce_zdr_openai",
        "enforce_zdr_other",
        "enforce_zdr_xai",
        "updated_at",
      ].sort(),
    );
  });

  it("asks for the other half of limit_usd/reset_interval to be unchanged when one is written alone", () => {
    expect(fieldsReadTogether(fieldsWritten(input, ["limit_usd"]))).to.deep.equal([
      "reset_interval",
    ]);
    expect(fieldsReadTogether(fieldsWritten(input, ["reset_interval"]))).to.deep.equal([
      "limit_usd",
    ]);
    expect(fieldsReadTogether(fieldsWritten(input, ["limit_usd", "reset_interval"]))).to.deep.equal(
      [],
    );
    expect(fieldsReadTogether(fieldsWritten(input, ["name"]))).to.deep.equal([]);
  });
});

function equals(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
