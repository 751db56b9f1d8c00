import { create } from "@bufbuild/protobuf";
import type { ModelCatalog } from "../domain/catalog/model-catalog.js";
import type { CatalogModel } from "../domain/catalog/types.js";
import {
  BREAKER_STATES,
  type BreakerStateName,
  BUDGET_SCOPES,
  FILTER_ACTIONS,
  GUARDRAIL_SOURCES,
  RESET_INTERVALS,
  type RegionName,
  regionName,
  regionValue,
} from "../domain/enums.js";
import { GUARDRAIL_FIELDS } from "../domain/guardrail-fields.js";
import { budgetWindow } from "../domain/windows.js";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { GuardrailSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type EffectivePolicy as EffectivePolicyMessage,
  EffectivePolicySchema,
  type ExplainModel,
  ExplainModelSchema,
  type ExplainResponse,
  ExplainResponseSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { notFound } from "../platform/rpc/errors.js";
import type { Store } from "../store/types.js";
import type { Principal } from "./governance-cache.js";
import { budgetCounters } from "./policy/budget-counters.js";
import { fromMicros, toMicros } from "./policy/money.js";
import type { EffectivePolicy, GoverningGuardrail } from "./policy/types.js";
import { allowListRefusers, modelRefusal, policyRules } from "./policy-rules.js";

function list(name: string, values: string[] | undefined): string[] {
  return values ? [`${name}: ${values.join(", ")}`] : [];
}

/** A guardrail field's name as the API spells it: the proto's. */
function nameOf(field: keyof typeof GuardrailSchema.field): string {
  return GuardrailSchema.field[field].name;
}

/** The per-vendor ZDR flags (what the deprecated enforce_zdr fills), by vendor: "enforce_zdr_xai" is xai. */
const ZDR_FLAGS = GUARDRAIL_FIELDS.aliases
  .filter((a) => a.name === "enforce_zdr")
  .flatMap((a) =>
    a.fills.map((f) => ({ vendor: f.name.slice(a.name.length + 1), localName: f.field.localName })),
  );

/** What one guardrail adds to the policy, in words an operator reads. */
function contributions(g: GoverningGuardrail): string[] {
  const r = g.guardrail;
  const zdr = ZDR_FLAGS.filter((f) => r[f.localName as keyof typeof r] === true).map(
    (f) => f.vendor,
  );
  return [
    ...list(
      "allowed_data_regions",
      r.allowedDataRegions?.values.map((x) => regionName(x) ?? String(x)),
    ),
    ...list("allowed_models", r.allowedModels?.values),
    ...list("allowed_providers", r.allowedProviders?.values),
    ...list("ignored_models", r.ignoredModels?.values),
    ...list("ignored_providers", r.ignoredProviders?.values),
    ...(zdr.length ? [`enforce_zdr: ${zdr.join(", ")}`] : []),
    ...(r.contentFilterBuiltins
      ? [`content_filter_builtins: ${r.contentFilterBuiltins.values.map((b) => b.slug).join(", ")}`]
      : []),
    ...(r.contentFilters
      ? [`content_filters: ${r.contentFilters.values.length} custom pattern(s)`]
      : []),
    // Permissions AND across guardrails: each one that withholds a permission is a reason it is missing.
    ...(
      ["enableFreeModelTraining", "enablePaidModelTraining", "enableFreeModelPublication"] as const
    )
      .filter((f) => !r[f])
      .map((f) => `${nameOf(f)}: false`),
    ...(["allowSafetyRetentionGoogle", "allowSafetyRetentionOther"] as const)
      .filter((f) => r[f] === false)
      .map((f) => `${nameOf(f)}: false`),
    ...(r.limitUsd !== undefined ? [`limit_usd: ${r.limitUsd}`] : []),
  ];
}

function policyMessage(p: EffectivePolicy, catalog: ModelCatalog): EffectivePolicyMessage {
  // An unrestricted list stays unset (JSON null); a restricting one is set, even when empty.
  const list = (s: ReadonlySet<string> | null) => (s ? { values: [...s] } : undefined);
  return create(EffectivePolicySchema, {
    allowedDataRegions: p.regions ? { values: [...p.regions].map(regionValue) } : undefined,
    // By catalog id: guardrails may name one model by different slugs, so the
    // intersection of the raw strings would mislead.
    allowedModels: p.allowedModels
      ? {
          values: catalog
            .models()
            .filter((m) => allowListRefusers(p, m).length === 0)
            .map((m) => m.id),
        }
      : undefined,
    allowedProviders: list(p.allowedProviders),
    ignoredModels: [...p.ignoredModels],
    ignoredProviders: [...p.ignoredProviders],
    enforceZdr: { ...p.zdr },
    enableFreeModelPublication: p.enableFreeModelPublication,
    enableFreeModelTraining: p.enableFreeModelTraining,
    enablePaidModelTraining: p.enablePaidModelTraining,
    allowSafetyRetentionGoogle: p.allowSafetyRetentionGoogle,
    allowSafetyRetentionOther: p.allowSafetyRetentionOther,
    contentFilters: p.filters.map((f) => ({
      slug: f.slug,
      action: FILTER_ACTIONS.value(f.action),
      label: f.label,
      guardrailId: f.guardrailId,
    })),
  });
}

/**
 * An endpoint's live health as the speech service sees it (its circuit breaker and the
 * measurements provider.sort uses): given by the caller, which owns them.
 */
export interface EndpointHealthView {
  breaker: BreakerStateName;
  consecutiveFailures: number;
  ttfbMs?: number;
  throughputBps?: number;
}
export type EndpointHealthOf = (modelId: string, provider: string) => EndpointHealthView;

function explainModel(p: Principal, model: CatalogModel, health?: EndpointHealthOf): ExplainModel {
  const refusal = modelRefusal(p.policy, model);
  const rules = policyRules(p.policy, model);
  return create(ExplainModelSchema, {
    model: model.id,
    allowed: !refusal,
    reason: refusal?.message ?? "",
    endpoints: model.endpoints.map((e) => {
      let reason = refusal ? "model refused" : "";
      for (const rule of rules) {
        if (reason) break;
        // Request-specific rules (capabilities, provider.zdr) depend on a request, not on the policy.
        reason = rule(e) ?? "";
      }
      const h = health?.(model.id, e.provider);
      return {
        provider: e.provider,
        eligible: !reason,
        reason,
        pricePerMillionChars: e.pricePerMillionChars,
        breaker: BREAKER_STATES.value(h?.breaker ?? "closed"),
        consecutiveFailures: h?.consecutiveFailures ?? 0,
        ttfbMs: h?.ttfbMs,
        throughputBytesPerSecond: h?.throughputBps,
      };
    }),
  });
}

export async function explain(
  store: Store,
  catalog: ModelCatalog,
  principal: Principal,
  modelId: string,
  /** The region to check; undefined: none asked (the caller parsed the request's name). */
  region: RegionName | undefined,
  /** Admission's "now": the budget windows explained are the ones admission charges. */
  now: Date,
  health?: EndpointHealthOf,
): Promise<ExplainResponse> {
  let models = catalog.models();
  if (modelId) {
    const m = catalog.find(modelId);
    if (!m) throw notFound(ErrorReason.MODEL_NOT_FOUND, `Model ${modelId.slice(0, 128)} not found`);
    models = [m];
  }
  const key = principal.key;
  // The counters admission checks, in its order: per key, and per member for the member's keys.
  const windows = budgetCounters(principal.policy.budgets, key.hash, key.memberUserId).map((c) => ({
    c,
    w: budgetWindow(c.budget.interval, now),
  }));
  const spent = await store.getSpend(
    principal.scope,
    windows.map(({ c, w }) => ({
      guardrailId: c.budget.guardrailId,
      entity: c.entity,
      firstDay: w.firstDay,
      lastDay: w.today,
    })),
  );
  const credits = await store.getCredits(principal.scope);
  return create(ExplainResponseSchema, {
    keyHash: principal.key.hash,
    workspaceId: principal.key.workspaceId,
    guardrails: principal.policy.guardrails.map((g) => ({
      source: GUARDRAIL_SOURCES.value(g.source),
      id: g.guardrail.id,
      name: g.guardrail.name,
      contributes: contributions(g),
      policyType: g.policyType ?? "",
      replacedLegacyGuardrailIds: g.replacedGuardrailIds ?? [],
    })),
    effectivePolicy: policyMessage(principal.policy, catalog),
    region: region === undefined ? undefined : regionValue(region),
    regionAllowed:
      region === undefined
        ? undefined
        : !principal.policy.regions || principal.policy.regions.has(region),
    budgets: windows.map(({ c, w }, i) => {
      const b = c.budget;
      const used = spent[i] ?? 0;
      return {
        guardrailId: b.guardrailId,
        guardrailName: b.guardrailName,
        policyId: b.policy ? b.guardrailId : "",
        limitUsd: b.limitUsd,
        interval: RESET_INTERVALS.value(b.interval),
        window: w.id,
        spentUsd: fromMicros(used),
        includeByok: b.includeByok,
        scope: BUDGET_SCOPES.value(c.scope),
        subject: c.entity.slice(c.entity.indexOf(":") + 1),
        remainingUsd: fromMicros(Math.max(0, toMicros(b.limitUsd) - used)),
      };
    }),
    models: models.map((m) => explainModel(principal, m, health)),
    creditsUsd: credits === undefined ? undefined : fromMicros(credits),
  });
}
