import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { CHECK_OUTCOMES, regionName } from "../../domain/enums.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import {
  type Guardrail,
  type GuardrailCheckRun,
  GuardrailCheckRunSchema,
  Region,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { withErrorMetadata } from "../../platform/rpc/errors.js";
import { nowTimestamp } from "../../platform/time.js";
import { decideExample, type ExampleCatalog, type ExampleOutcome } from "../decide-example.js";
import type { AccountSettings } from "../policy/types.js";

/** What running a guardrail's checks needs: the models (as the speech service knows them) and the account's settings. */
export interface CheckContext {
  catalog: ExampleCatalog;
  account: AccountSettings;
}

/**
 * Decides each check's example request under the guardrail and compares the outcome with the
 * one it expects (and, for a refusal that names a reason, the refusal's words).
 */
export async function runChecks(g: Guardrail, ctx: CheckContext): Promise<GuardrailCheckRun> {
  const results = [];
  for (const check of g.checks?.values ?? []) {
    const r = check.request;
    const decision = await decideExample(
      g,
      {
        model: r?.model ?? "",
        input: r?.input,
        voice: r?.voice,
        region: r && r.region !== Region.UNSPECIFIED ? regionName(r.region) : undefined,
        provider: r?.provider,
      },
      ctx.catalog,
      ctx.account,
    );
    const expected = CHECK_OUTCOMES.name(check.expect);
    const passed =
      decision.outcome === expected &&
      (check.reason === undefined ||
        decision.reason.toLowerCase().includes(check.reason.toLowerCase()));
    results.push({
      name: check.name,
      expect: check.expect,
      outcome: CHECK_OUTCOMES.value(decision.outcome satisfies ExampleOutcome),
      passed,
      reason: decision.reason,
    });
  }
  return create(GuardrailCheckRunSchema, {
    ranAt: nowTimestamp(),
    passed: results.every((r) => r.passed),
    results,
  });
}

/** "<name>: expected refused, got allowed": how a failing check is named in a 409 and the audit. */
export function failingChecks(run: GuardrailCheckRun): string[] {
  return run.results
    .filter((r) => !r.passed)
    .map((r) => {
      const got = CHECK_OUTCOMES.name(r.outcome);
      const why = r.reason ? ` (${r.reason})` : "";
      return `${r.name}: expected ${CHECK_OUTCOMES.name(r.expect)}, got ${got}${why}`;
    });
}

/** The 409 of a change whose checks fail and that is not forced. */
export function checksFailedError(failing: string[]) {
  return withErrorMetadata(
    Code.Aborted,
    ErrorReason.CHECKS_FAILED,
    `the change fails ${failing.length} check(s): ${failing.join("; ")} (send force: true to apply it anyway)`,
    { failingChecks: failing },
  );
}

/** A check run in the audit log: whether it passed, and which checks failed. */
export function runSummary(run: GuardrailCheckRun): { passed: boolean; failing: string[] } {
  return {
    passed: run.passed,
    failing: run.results
      .filter((r) => !r.passed)
      .map(
        (r) =>
          `${r.name}: expected ${CHECK_OUTCOMES.name(r.expect)}, got ${CHECK_OUTCOMES.name(r.outcome)}`,
      ),
  };
}
