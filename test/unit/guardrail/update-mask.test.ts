import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import {
  FilterAction,
  GuardrailInputSchema,
  ResetInterval,
  StringListSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../../services/common/time.js";
import { applyUpdateMask, guardrailFromInput } from "../../../services/guardrail/update-mask.js";

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

function rejects(fn: () => unknown, pattern: RegExp): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).rawMessage).to.match(pattern);
    return;
  }
  expect.fail("expected an InvalidArgument error");
}

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

  it("rejects null for plain booleans and name, and refuses workspace_id and unknown paths", () => {
    rejects(
      () =>
        applyUpdateMask(base(), create(GuardrailInputSchema, {}), ["include_byok_in_budgets"], now),
      /include_byok_in_budgets/,
    );
    rejects(
      () => applyUpdateMask(base(), create(GuardrailInputSchema, {}), ["name"], now),
      /name cannot be null/,
    );
    rejects(
      () => applyUpdateMask(base(), create(GuardrailInputSchema, {}), ["workspace_id"], now),
      /workspace_id/,
    );
    rejects(
      () => applyUpdateMask(base(), create(GuardrailInputSchema, {}), ["bogus"], now),
      /bogus/,
    );
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
