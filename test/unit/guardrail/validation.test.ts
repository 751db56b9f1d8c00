import { create } from "@bufbuild/protobuf";
import { ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import {
  FilterAction,
  type Guardrail,
  GuardrailSchema,
  Region,
  ResetInterval,
  ScanScope,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { validateGuardrail } from "../../../services/guardrail/validation.js";

const valid = (patch: Partial<Guardrail> = {}) =>
  Object.assign(create(GuardrailSchema, { id: "i", workspaceId: "w", name: "ok" }), patch);

function invalid(patch: Partial<Guardrail>, pattern: RegExp): void {
  try {
    validateGuardrail(valid(patch));
  } catch (err) {
    expect(err).to.be.instanceOf(ConnectError);
    expect((err as ConnectError).rawMessage).to.match(pattern);
    return;
  }
  expect.fail(`expected ${pattern} to be rejected`);
}

describe("validateGuardrail", () => {
  it("accepts a minimal guardrail and boundary lengths", () => {
    validateGuardrail(valid());
    validateGuardrail(valid({ name: "n".repeat(200), description: "d".repeat(1000) }));
    validateGuardrail(valid({ name: "é".repeat(200) }));
  });

  it("enforces name and description lengths", () => {
    invalid({ name: "" }, /^name/);
    invalid({ name: "   " }, /^name/);
    invalid({ name: "n".repeat(201) }, /^name/);
    invalid({ description: "d".repeat(1001) }, /^description/);
  });

  it("rejects empty lists and blank list items", () => {
    invalid(
      { allowedDataRegions: { values: [] } as never },
      /allowed_data_regions must have at least 1/,
    );
    invalid({ allowedModels: { values: [] } as never }, /allowed_models must have at least 1/);
    invalid({ ignoredProviders: { values: [""] } as never }, /ignored_providers\[0\]/);
    invalid(
      { allowedDataRegions: { values: [Region.UNSPECIFIED] } as never },
      /allowed_data_regions\[0\]/,
    );
  });

  it("requires limit_usd and reset_interval together, and a sane limit", () => {
    invalid({ limitUsd: 5 }, /limit_usd and reset_interval/);
    invalid({ resetInterval: ResetInterval.WEEKLY }, /limit_usd and reset_interval/);
    invalid({ limitUsd: -1, resetInterval: ResetInterval.DAILY }, /limit_usd must be/);
    validateGuardrail(valid({ limitUsd: 0, resetInterval: ResetInterval.MONTHLY }));
  });

  it("checks builtin slugs, actions, duplicates and scan_scope", () => {
    // Decoded messages always carry scan_scope (UNSPECIFIED when unset); mirror that here.
    const b = (values: object[]) => ({
      contentFilterBuiltins: {
        values: values.map((v) => ({ scanScope: ScanScope.UNSPECIFIED, ...v })),
      } as never,
    });
    invalid(b([{ slug: "nope", action: FilterAction.BLOCK }]), /slug "nope" is not a builtin/);
    invalid(b([{ slug: "email", action: FilterAction.UNSPECIFIED }]), /action/);
    invalid(
      b([
        { slug: "email", action: FilterAction.FLAG },
        { slug: "email", action: FilterAction.BLOCK },
      ]),
      /more than once/,
    );
    invalid(
      b([{ slug: "email", action: FilterAction.FLAG, scanScope: ScanScope.USER_ONLY }]),
      /scan_scope/,
    );
    // A value no name stands for (a protobuf client can send any number): refused, never stored.
    invalid(
      b([{ slug: "regex-prompt-injection", action: FilterAction.FLAG, scanScope: 99 }]),
      /content_filter_builtins\[0\]\.scan_scope must be one of "user_only", "all_messages"/,
    );
    invalid(
      b([{ slug: "", action: FilterAction.FLAG }]),
      /content_filter_builtins\[0\]\.slug is required/,
    );
    invalid({ resetInterval: 9 as ResetInterval, limitUsd: 1 }, /reset_interval must be one of/);
    validateGuardrail(
      valid(
        b([
          {
            slug: "regex-prompt-injection",
            action: FilterAction.BLOCK,
            scanScope: ScanScope.USER_ONLY,
          },
        ]),
      ),
    );
  });

  it("rejects custom patterns RE2 cannot run in linear time", () => {
    const c = (pattern: string) => ({
      contentFilters: { values: [{ pattern, action: FilterAction.BLOCK, label: "" }] } as never,
    });
    invalid(c("(a)\\1"), /content_filters\[0\]\.pattern.*backreferences/);
    invalid(c("(?=x)"), /content_filters\[0\]\.pattern/);
    invalid(c(""), /content_filters\[0\]\.pattern is required/);
    validateGuardrail(valid(c("\\b\\d{3}-\\d{2}-\\d{4}\\b")));
  });
});
