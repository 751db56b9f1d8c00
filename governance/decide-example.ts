import type { CatalogModel } from "../domain/catalog/types.js";
import type { RegionName } from "../domain/enums.js";
import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { applyFilters, CompiledFilters } from "./filters/index.js";
import type { FilterResult } from "./filters/types.js";
import { effectivePolicy } from "./policy/effective-policy.js";
import type { AccountSettings } from "./policy/types.js";
import { modelRefusal, policyRules } from "./policy-rules.js";

/** An example speech request, as a check or a what-if names it. */
export interface ExampleRequest {
  model: string;
  input?: string;
  voice?: string;
  /** The ingress region it arrives at; undefined: any. */
  region?: RegionName;
  /** Only this provider may serve it; undefined: any the guardrail leaves. */
  provider?: string;
}

export type ExampleOutcome = "allowed" | "refused" | "redacted" | "flagged";

export interface ExampleDecision {
  outcome: ExampleOutcome;
  /** Why, in the words the gateway's refusal or the filters' outcome would use. */
  reason: string;
}

/** What deciding an example needs to know of the models: lookup by id or alias. */
export interface ExampleCatalog {
  find(id: string): CatalogModel | undefined;
}

/**
 * Decides an example request under one guardrail alone, with the rules enforcement applies in
 * its order: region, model lists, the endpoints' data policies (providers, ZDR, training,
 * publication), then the content filters on the input (block refuses, else redact, else flag).
 * Budgets are not decided: an example has no spend of its own.
 */
export async function decideExample(
  guardrail: Guardrail,
  request: ExampleRequest,
  catalog: ExampleCatalog,
  account: AccountSettings,
): Promise<ExampleDecision> {
  const policy = effectivePolicy([{ source: "key", guardrail }], account);
  const refused = (reason: string): ExampleDecision => ({ outcome: "refused", reason });
  if (request.region && policy.regions && !policy.regions.has(request.region)) {
    return refused(`region ${request.region} is not in allowed_data_regions`);
  }
  const model = catalog.find(request.model);
  if (!model) return refused(`model ${request.model} is not in the catalog`);
  if (request.voice !== undefined && model.voices.length > 0) {
    if (!model.voices.some((v) => v.id === request.voice))
      return refused(`voice ${request.voice} is not a voice of model ${model.id}`);
  }
  const refusal = modelRefusal(policy, model);
  if (refusal) return refused(refusal.message);
  const rules = policyRules(policy, model);
  const reasons: string[] = [];
  const endpoints = model.endpoints.filter((e) => {
    if (request.provider !== undefined && e.provider !== request.provider) return false;
    for (const rule of rules) {
      const why = rule(e);
      if (why) {
        reasons.push(`${e.provider}: ${why}`);
        return false;
      }
    }
    return true;
  });
  if (endpoints.length === 0) {
    const only = request.provider === undefined ? "" : ` from provider ${request.provider}`;
    const why = reasons.length > 0 ? ` (${reasons.join("; ")})` : "";
    return refused(`no endpoint of model ${model.id}${only} is allowed${why}`);
  }
  if (request.input === undefined || policy.filters.length === 0) {
    return { outcome: "allowed", reason: "" };
  }
  const filters = CompiledFilters.compile(policy.filters);
  return decisionOfFilters(await applyFilters(filters, [{ text: request.input, role: "user" }]));
}

/** What the content filters' result decides: a block refuses, else a redaction, else a flag. */
export function decisionOfFilters(result: FilterResult): ExampleDecision {
  if (result.blockedBy)
    return {
      outcome: "refused",
      reason: `Request blocked by content filter: ${result.blockedBy.name}`,
    };
  const acted = (action: string) =>
    result.outcomes.filter((o) => o.action === action).map((o) => `${o.slug} ${o.label}`.trim());
  const redacted = acted("redact");
  if (redacted.length > 0) return { outcome: "redacted", reason: redacted.join(", ") };
  const flagged = acted("flag");
  if (flagged.length > 0) return { outcome: "flagged", reason: flagged.join(", ") };
  return { outcome: "allowed", reason: "" };
}
