import { clone } from "@bufbuild/protobuf";
import { FILTER_ACTIONS, RESET_INTERVALS, regionName } from "../../domain/enums.js";
import {
  type Guardrail,
  GuardrailSchema,
  ResetInterval,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { PolicyType } from "../../store/policies/types.js";

type Config = Record<string, unknown>;

/**
 * The part of a guardrail one policy type holds, or undefined when the guardrail sets none of
 * it ("only the parts the guardrail actually sets become policies"). Setting names and values
 * are the guardrail's own.
 */
export function guardrailPart(g: Guardrail, type: PolicyType): Config | undefined {
  if (type === "budget") {
    if (g.limitUsd === undefined) return undefined;
    return {
      limit_usd: g.limitUsd,
      reset_interval: RESET_INTERVALS.name(g.resetInterval) ?? null,
      include_byok_in_budgets: g.includeByokInBudgets,
    };
  }
  if (type === "moderation") {
    if (!g.contentFilterBuiltins && !g.contentFilters) return undefined;
    const out: Config = {};
    if (g.contentFilterBuiltins)
      out.content_filter_builtins = g.contentFilterBuiltins.values.map((b) => ({
        slug: b.slug,
        action: FILTER_ACTIONS.name(b.action) ?? null,
      }));
    if (g.contentFilters)
      out.content_filters = g.contentFilters.values.map((f) => ({
        pattern: f.pattern,
        action: FILTER_ACTIONS.name(f.action) ?? null,
        ...(f.label ? { label: f.label } : {}),
      }));
    return out;
  }
  const lists: Config = {};
  if (g.allowedModels) lists.allowed_models = g.allowedModels.values;
  if (g.ignoredModels) lists.ignored_models = g.ignoredModels.values;
  if (g.allowedProviders) lists.allowed_providers = g.allowedProviders.values;
  if (g.ignoredProviders) lists.ignored_providers = g.ignoredProviders.values;
  if (g.allowedDataRegions)
    lists.allowed_data_regions = g.allowedDataRegions.values.flatMap((r) => regionName(r) ?? []);
  const zdr: Config = {
    enforce_zdr_anthropic: g.enforceZdrAnthropic,
    enforce_zdr_openai: g.enforceZdrOpenai,
    enforce_zdr_google: g.enforceZdrGoogle,
    enforce_zdr_xai: g.enforceZdrXai,
    enforce_zdr_other: g.enforceZdrOther,
  };
  const sets =
    Object.keys(lists).length > 0 ||
    Object.values(zdr).some(Boolean) ||
    g.allowSafetyRetentionGoogle !== undefined ||
    g.allowSafetyRetentionOther !== undefined;
  if (!sets) return undefined;
  return {
    ...lists,
    ...zdr,
    enable_free_model_publication: g.enableFreeModelPublication,
    enable_free_model_training: g.enableFreeModelTraining,
    enable_paid_model_training: g.enablePaidModelTraining,
    ...(g.allowSafetyRetentionGoogle !== undefined
      ? { allow_safety_retention_google: g.allowSafetyRetentionGoogle }
      : {}),
    ...(g.allowSafetyRetentionOther !== undefined
      ? { allow_safety_retention_other: g.allowSafetyRetentionOther }
      : {}),
  };
}

/**
 * The guardrail without the parts of the given policy types: what it still governs once a
 * workspace manages those types through guardrail policies (the policies that replaced its parts
 * govern instead). Every other setting is kept as it is, the model permissions too: a guardrail
 * withholds them by default, so one that maps to no model availability policy still withholds
 * them, and a policy can only add restrictions to what governs a key.
 */
export function withoutPolicyTypes(g: Guardrail, types: readonly PolicyType[]): Guardrail {
  if (types.length === 0) return g;
  const out = clone(GuardrailSchema, g);
  if (types.includes("budget")) {
    out.limitUsd = undefined;
    out.resetInterval = ResetInterval.UNSPECIFIED;
    out.includeByokInBudgets = false;
  }
  if (types.includes("moderation")) {
    out.contentFilterBuiltins = undefined;
    out.contentFilters = undefined;
  }
  if (types.includes("model_availability")) {
    out.allowedModels = undefined;
    out.ignoredModels = undefined;
    out.allowedProviders = undefined;
    out.ignoredProviders = undefined;
    out.allowedDataRegions = undefined;
    out.enforceZdrAnthropic = false;
    out.enforceZdrOpenai = false;
    out.enforceZdrGoogle = false;
    out.enforceZdrXai = false;
    out.enforceZdrOther = false;
    out.allowSafetyRetentionGoogle = undefined;
    out.allowSafetyRetentionOther = undefined;
  }
  return out;
}

/**
 * The settings of managed types that a guardrail write would change (`before` undefined: a
 * create), as `<type>: <field>` pairs; empty when the write leaves every managed type as it was.
 */
export function managedChanges(
  before: Guardrail | undefined,
  after: Guardrail,
  types: readonly PolicyType[],
): { type: PolicyType; field: string }[] {
  const out: { type: PolicyType; field: string }[] = [];
  for (const type of types) {
    const was = (before && guardrailPart(before, type)) ?? {};
    const is = guardrailPart(after, type) ?? {};
    for (const field of new Set([...Object.keys(was), ...Object.keys(is)])) {
      if (JSON.stringify(was[field]) !== JSON.stringify(is[field])) out.push({ type, field });
    }
  }
  return out;
}
