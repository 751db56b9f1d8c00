import { create, type JsonObject } from "@bufbuild/protobuf";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { GuardrailSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type ExplainModel,
  ExplainModelSchema,
  type ExplainResponse,
  ExplainResponseSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { invalidArgument, notFound } from "../platform/errors.js";
import { isRegionName, quotedRegionNames, regionName } from "../platform/regions.js";
import { GUARDRAIL_FIELDS } from "../services/guardrail/field-table.js";
import type { ModelCatalog } from "../services/speech/catalog/model-catalog.js";
import type { CatalogModel } from "../services/speech/catalog/types.js";
import type { Store } from "../store/types.js";
import type { Principal } from "./governance-cache.js";
import { budgetCounters } from "./policy/budget-counters.js";
import { fromMicros, toMicros } from "./policy/money.js";
import type { EffectivePolicy, GoverningGuardrail } from "./policy/types.js";
import { budgetWindow } from "./policy/windows.js";
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

function policyJson(p: EffectivePolicy, catalog: ModelCatalog): JsonObject {
  const set = (s: ReadonlySet<string> | null) => (s ? [...s] : null);
  return {
    allowed_data_regions: set(p.regions),
    // By catalog id: guardrails may name one model by different slugs, so the
    // intersection of the raw strings would mislead.
    allowed_models: p.allowedModels
      ? catalog
          .models()
          .filter((m) => allowListRefusers(p, m).length === 0)
          .map((m) => m.id)
      : null,
    allowed_providers: set(p.allowedProviders),
    ignored_models: [...p.ignoredModels],
    ignored_providers: [...p.ignoredProviders],
    enforce_zdr: { ...p.zdr },
    enable_free_model_publication: p.enableFreeModelPublication,
    enable_free_model_training: p.enableFreeModelTraining,
    enable_paid_model_training: p.enablePaidModelTraining,
    allow_safety_retention_google: p.allowSafetyRetentionGoogle,
    allow_safety_retention_other: p.allowSafetyRetentionOther,
    content_filters: p.filters.map((f) => ({
      slug: f.slug,
      action: f.action,
      label: f.label,
      guardrail_id: f.guardrailId,
    })),
  };
}

function explainModel(p: Principal, model: CatalogModel): ExplainModel {
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
      return {
        provider: e.provider,
        eligible: !reason,
        reason,
        pricePerMillionChars: e.price_per_million_chars,
      };
    }),
  });
}

export async function explain(
  store: Store,
  catalog: ModelCatalog,
  principal: Principal,
  modelId: string,
  region: string,
): Promise<ExplainResponse> {
  if (region && !isRegionName(region))
    throw invalidArgument(`region must be one of ${quotedRegionNames()}`);
  let models = catalog.models();
  if (modelId) {
    const m = catalog.find(modelId);
    if (!m) throw notFound(ErrorReason.MODEL_NOT_FOUND, `Model ${modelId.slice(0, 128)} not found`);
    models = [m];
  }
  const now = new Date();
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
      source: g.source,
      id: g.guardrail.id,
      name: g.guardrail.name,
      contributes: contributions(g),
    })),
    effectivePolicy: policyJson(principal.policy, catalog),
    region,
    regionAllowed: isRegionName(region)
      ? !principal.policy.regions || principal.policy.regions.has(region)
      : undefined,
    budgets: windows.map(({ c, w }, i) => {
      const b = c.budget;
      const used = spent[i] ?? 0;
      return {
        guardrailId: b.guardrailId,
        guardrailName: b.guardrailName,
        limitUsd: b.limitUsd,
        interval: b.interval,
        window: w.id,
        spentUsd: fromMicros(used),
        includeByok: b.includeByok,
        scope: c.scope,
        subject: c.entity.slice(c.entity.indexOf(":") + 1),
        remainingUsd: fromMicros(Math.max(0, toMicros(b.limitUsd) - used)),
      };
    }),
    models: models.map((m) => explainModel(principal, m)),
    creditsUsd: credits === undefined ? undefined : fromMicros(credits),
  });
}
