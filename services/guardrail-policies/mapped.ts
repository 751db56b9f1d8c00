import { create } from "@bufbuild/protobuf";
import { FILTER_ACTIONS, RESET_INTERVALS, regionName } from "../../domain/enums.js";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GuardrailPolicy,
  GuardrailPolicySchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import type { PolicyType } from "../../store/policies/types.js";
import type { Store } from "../../store/types.js";

/** Guardrails and assignments are read in pages of this size (a workspace's counts are bounded). */
const PAGE = 500;

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

async function allPages<T>(page: (offset: number) => Promise<{ items: T[]; total: number }>) {
  const out: T[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { items, total } = await page(offset);
    out.push(...items);
    if (items.length === 0 || out.length >= total) return out;
  }
}

/**
 * The read-only policies of one type that a workspace's guardrails map to (OpenRouter's
 * migration: every guardrail also appears as up to three policies). A mapped policy has the
 * guardrail's id, name and assignments; it changes only through the guardrails API.
 */
export async function mappedPolicies(
  store: Store,
  workspaceId: string,
  type: PolicyType,
): Promise<GuardrailPolicy[]> {
  const guardrails = await allPages((offset) => store.listGuardrails(workspaceId, offset, PAGE));
  const out: GuardrailPolicy[] = [];
  for (const g of guardrails) {
    const config = guardrailPart(g, type);
    if (!config) continue;
    const subjects = async (kind: "key" | "member") =>
      (
        await allPages((offset) => store.listAssignments(kind, workspaceId, g.id, offset, PAGE))
      ).map((a) => a.subject);
    out.push(
      create(GuardrailPolicySchema, {
        id: g.id,
        workspaceId,
        policyType: type,
        name: g.name,
        config: config as GuardrailPolicy["config"],
        apiKeyHashes: await subjects("key"),
        memberIds: await subjects("member"),
        isWorkspaceDefault: g.isWorkspaceDefault,
        updatedAt: g.updatedAt ?? g.createdAt,
        legacyGuardrailIds: [g.id],
      }),
    );
  }
  return out;
}
