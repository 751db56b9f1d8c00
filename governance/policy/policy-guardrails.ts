import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { builtinEntry, SCOPED_BUILTIN } from "../../domain/builtin-filters.js";
import {
  FILTER_ACTIONS,
  type FilterActionName,
  RESET_INTERVALS,
  type RegionName,
  type ResetIntervalName,
  regionValue,
} from "../../domain/enums.js";
import {
  type Guardrail,
  GuardrailSchema,
  ScanScope,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { assignmentState } from "../../store/policies/policy-doc.js";
import {
  type AccountPolicy,
  coversWorkspace,
  type PolicyDoc,
  type StoredPolicy,
} from "../../store/policies/types.js";
import type { GoverningGuardrail, GuardrailSource } from "./types.js";

type Config = Record<string, unknown>;

const list = (c: Config, name: string) => c[name] as string[] | undefined;
const flag = (c: Config, name: string) => c[name] === true;

/**
 * A policy as the guardrail that holds exactly its settings, so that policies and guardrails
 * fold into one effective policy by one algebra (effective-policy.ts): a budget or moderation
 * policy leaves every model permission as it is (a guardrail's false would take them away),
 * while a model availability policy means what the same settings mean in a guardrail.
 */
export function policyAsGuardrail(
  p: Pick<StoredPolicy, "id" | "name" | "policyType" | "config"> & { workspaceId?: string },
): Guardrail {
  const c = p.config;
  const init: MessageInitShape<typeof GuardrailSchema> = {
    id: p.id,
    name: p.name,
    workspaceId: p.workspaceId ?? "",
    enableFreeModelPublication: true,
    enableFreeModelTraining: true,
    enablePaidModelTraining: true,
  };
  if (p.policyType === "budget") {
    init.limitUsd = c.limit_usd as number;
    init.resetInterval = RESET_INTERVALS.value(c.reset_interval as ResetIntervalName);
    init.includeByokInBudgets = flag(c, "include_byok_in_budgets");
  } else if (p.policyType === "model_availability") {
    const values = (name: string) => {
      const v = list(c, name);
      return v ? { values: v } : undefined;
    };
    init.allowedModels = values("allowed_models");
    init.ignoredModels = values("ignored_models");
    init.allowedProviders = values("allowed_providers");
    init.ignoredProviders = values("ignored_providers");
    let regions = list(c, "allowed_data_regions") as RegionName[] | undefined;
    if (flag(c, "require_eu_data_region"))
      regions = (regions ?? ["europe"]).filter((r) => r === "europe");
    if (regions) init.allowedDataRegions = { values: regions.map(regionValue) };
    const all = flag(c, "enforce_zdr");
    init.enforceZdrAnthropic = all || flag(c, "enforce_zdr_anthropic");
    init.enforceZdrOpenai = all || flag(c, "enforce_zdr_openai");
    init.enforceZdrGoogle = all || flag(c, "enforce_zdr_google");
    init.enforceZdrXai = all || flag(c, "enforce_zdr_xai");
    init.enforceZdrOther = all || flag(c, "enforce_zdr_other");
    init.enableFreeModelPublication = flag(c, "enable_free_model_publication");
    init.enableFreeModelTraining = flag(c, "enable_free_model_training");
    init.enablePaidModelTraining = flag(c, "enable_paid_model_training");
    if (typeof c.allow_safety_retention_google === "boolean")
      init.allowSafetyRetentionGoogle = c.allow_safety_retention_google;
    if (typeof c.allow_safety_retention_other === "boolean")
      init.allowSafetyRetentionOther = c.allow_safety_retention_other;
  } else {
    const builtins = (c.content_filter_builtins ?? []) as { slug: string; action: string }[];
    const custom = (c.content_filters ?? []) as {
      pattern: string;
      action: string;
      label?: string;
    }[];
    if (builtins.length > 0)
      init.contentFilterBuiltins = {
        values: builtins.map((b) => ({
          slug: b.slug,
          action: FILTER_ACTIONS.value(b.action as FilterActionName),
          label: builtinEntry(b.slug)?.label ?? "",
          scanScope: b.slug === SCOPED_BUILTIN ? ScanScope.ALL_MESSAGES : ScanScope.UNSPECIFIED,
        })),
      };
    if (custom.length > 0)
      init.contentFilters = {
        values: custom.map((f) => ({
          pattern: f.pattern,
          action: FILTER_ACTIONS.value(f.action as FilterActionName),
          label: f.label ?? "",
        })),
      };
  }
  return create(GuardrailSchema, init);
}

/**
 * A policy's running shadow as enforcement decides it: the guardrail holding the proposed
 * settings. Built when a principal loads, never per request.
 */
function policyShadowOf(
  p: Pick<StoredPolicy, "id" | "name" | "policyType" | "config" | "shadow">,
): Pick<GoverningGuardrail, "policyShadow"> {
  const s = p.shadow;
  if (!s) return {};
  return {
    policyShadow: {
      version: policyAsGuardrail({ ...p, name: s.name, config: s.config }),
      expiresAtMs: s.expiresAtMs,
    },
  };
}

/**
 * The policies that govern a key, as guardrails: those assigned to the key (source "key"), to
 * its member ("member"), and the workspace defaults the key inherits ("workspace_default": not
 * when it opted out or holds a policy of the type directly). Every one adds its restrictions;
 * budgets stay per entity (budget-counters.ts counts a member's policy against the member).
 */
export function governingPolicies(
  doc: PolicyDoc,
  keyHash: string,
  memberUserId: string,
): GoverningGuardrail[] {
  const byId = new Map(doc.policies.map((p) => [p.id, p]));
  const out: GoverningGuardrail[] = [];
  const add = (ids: string[], source: GuardrailSource) => {
    for (const id of ids) {
      const p = byId.get(id);
      if (p)
        out.push({
          source,
          guardrail: policyAsGuardrail(p),
          ...policyFacts(p),
          ...policyShadowOf(p),
        });
    }
  };
  for (const type of new Set(doc.policies.map((p) => p.policyType))) {
    const key = assignmentState(doc, type, "api_key", keyHash);
    add(key.policyIds, "key");
    if (memberUserId) add(assignmentState(doc, type, "member", memberUserId).policyIds, "member");
    add(key.workspaceDefaultPolicyIds, "workspace_default");
  }
  return out;
}

/**
 * The workspace-wide policies that cover a workspace, as guardrails. They govern every key and
 * member of it whatever else is assigned (nothing opts a key out of them), so a key's or member's
 * own policy can only add to them; a budget counts each key and each member on its own, as a
 * default guardrail's does ("a maximum per-person spending cap").
 */
export function accountPolicies(
  policies: readonly AccountPolicy[],
  workspaceId: string,
): GoverningGuardrail[] {
  return policies
    .filter((p) => coversWorkspace(p, workspaceId))
    .map((p) => ({
      source: "workspace_default" as const,
      guardrail: policyAsGuardrail(p),
      ...policyFacts(p),
      ...policyShadowOf(p),
    }));
}

/** What a governing layer says of the policy it stands for (explanations and records). */
function policyFacts(p: Pick<StoredPolicy, "policyType" | "replacedLegacyGuardrailIds">) {
  return {
    policy: true as const,
    policyType: p.policyType,
    ...(p.replacedLegacyGuardrailIds ? { replacedGuardrailIds: p.replacedLegacyGuardrailIds } : {}),
  };
}
