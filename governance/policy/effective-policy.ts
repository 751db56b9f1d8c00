import { FILTER_ACTIONS, RESET_INTERVALS, regionName } from "../../domain/enums.js";
import { type Guardrail, ScanScope } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type {
  AccountSettings,
  BudgetSpec,
  EffectivePolicy,
  FilterRuleSpec,
  GoverningGuardrail,
} from "./types.js";

/** The budget window of a guardrail's reset_interval; undefined when it has no limit. */
export function budgetInterval(g: Guardrail): BudgetSpec["interval"] | undefined {
  return RESET_INTERVALS.name(g.resetInterval);
}

/** Intersection of the non-null sets; null when every input is null (no restriction). */
function intersect<T>(sets: (T[] | undefined)[]): Set<T> | null {
  let out: Set<T> | null = null;
  for (const s of sets) {
    if (!s) continue;
    out = out === null ? new Set(s) : new Set(s.filter((v) => (out as Set<T>).has(v)));
  }
  return out;
}

function filtersOf(g: Guardrail, policy: true | undefined): FilterRuleSpec[] {
  const from = { guardrailId: g.id, ...(policy ? { policy } : {}) };
  const builtins = (g.contentFilterBuiltins?.values ?? []).flatMap((b) => {
    const action = FILTER_ACTIONS.name(b.action);
    if (!action) return [];
    return [
      {
        slug: b.slug,
        action,
        label: b.label,
        scanScope: b.scanScope === ScanScope.USER_ONLY ? ("user_only" as const) : undefined,
        ...from,
      },
    ];
  });
  const custom = (g.contentFilters?.values ?? []).flatMap((f) => {
    const action = FILTER_ACTIONS.name(f.action);
    if (!action) return [];
    // An empty label lets the filter engine pick [REDACTED] or, for block, [BLOCKED].
    return [
      {
        slug: "custom",
        action,
        label: f.label,
        pattern: f.pattern,
        ...from,
      },
    ];
  });
  return [...builtins, ...custom];
}

/**
 * Folds the guardrails that govern a request (key, member, workspace default)
 * into one policy: regions and allow-lists intersect, ignore-lists union, ZDR
 * flags OR, training/publication permissions AND, safety retention takes the
 * most restrictive value (starting from the account setting), filters union,
 * and each budget stays its own.
 */
export function effectivePolicy(
  governing: GoverningGuardrail[],
  account: AccountSettings,
): EffectivePolicy {
  const gs = governing.map((g) => g.guardrail);
  const any = gs.length > 0;
  const all = (pick: (g: Guardrail) => boolean) => gs.every(pick);
  const some = (pick: (g: Guardrail) => boolean) => gs.some(pick);
  const budgets: BudgetSpec[] = governing.flatMap(({ source, guardrail: g, policy }) => {
    const interval = budgetInterval(g);
    return g.limitUsd !== undefined && interval
      ? [
          {
            guardrailId: g.id,
            guardrailName: g.name,
            source,
            limitUsd: g.limitUsd,
            interval,
            includeByok: g.includeByokInBudgets,
            ...(policy ? { policy } : {}),
          },
        ]
      : [];
  });
  return {
    guardrails: governing,
    regions: intersect(
      gs.map((g) => g.allowedDataRegions?.values.flatMap((r) => regionName(r) ?? [])),
    ),
    allowedModels: intersect(gs.map((g) => g.allowedModels?.values)),
    allowedProviders: intersect(gs.map((g) => g.allowedProviders?.values)),
    ignoredModels: new Set(gs.flatMap((g) => g.ignoredModels?.values ?? [])),
    ignoredProviders: new Set(gs.flatMap((g) => g.ignoredProviders?.values ?? [])),
    zdr: {
      anthropic: some((g) => g.enforceZdrAnthropic),
      openai: some((g) => g.enforceZdrOpenai),
      google: some((g) => g.enforceZdrGoogle),
      xai: some((g) => g.enforceZdrXai),
      other: some((g) => g.enforceZdrOther),
    },
    // With no guardrail nothing is restricted; each guardrail can only take permissions away.
    enableFreeModelPublication: !any || all((g) => g.enableFreeModelPublication),
    enableFreeModelTraining: !any || all((g) => g.enableFreeModelTraining),
    enablePaidModelTraining: !any || all((g) => g.enablePaidModelTraining),
    allowSafetyRetentionGoogle:
      account.allowSafetyRetentionGoogle && all((g) => g.allowSafetyRetentionGoogle !== false),
    allowSafetyRetentionOther:
      account.allowSafetyRetentionOther && all((g) => g.allowSafetyRetentionOther !== false),
    filters: governing.flatMap((g) => filtersOf(g.guardrail, g.policy)),
    budgets,
    forbidAudioCache: some(
      (g) =>
        g.forbidAudioCache ||
        g.enforceZdrAnthropic ||
        g.enforceZdrOpenai ||
        g.enforceZdrGoogle ||
        g.enforceZdrXai ||
        g.enforceZdrOther,
    ),
  };
}
