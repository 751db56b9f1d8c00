import { create } from "@bufbuild/protobuf";
import type { ReferenceInput, SynthesisSegment } from "../domain/catalog/speech-input.js";
import type { CatalogModel } from "../domain/catalog/types.js";
import type { RegionName } from "../domain/enums.js";
import { type ShadowOutcome, ShadowOutcomeSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { decisionOfFilters, type ExampleDecision, type ExampleOutcome } from "./decide-example.js";
import { applyFilters, type CompiledFilters, type TextPart } from "./filters/index.js";
import type { ShadowPolicy } from "./governance-cache.js";
import { modelRefusal, policyRules } from "./policy-rules.js";

/** What deciding a request under a shadow reads of it: what enforcement read, before routing. */
export interface ShadowedRequest {
  model: CatalogModel;
  segments: readonly SynthesisSegment[];
  references: readonly ReferenceInput[];
  zdr: boolean;
  region: RegionName;
}

function textParts(req: ShadowedRequest): TextPart[] {
  const parts: TextPart[] = [];
  for (const s of req.segments) {
    parts.push({ text: s.text, role: "user" });
    if (s.instructions) parts.push({ text: s.instructions, role: "instructions" });
  }
  for (const r of req.references)
    if (r.kind === "text") parts.push({ text: r.value, role: "user" });
  return parts;
}

/**
 * What the live decision's content filters made of the request, when they ran: a shadow whose
 * filters are the live ones (compiled once per filter set, so the same object) takes it instead
 * of filtering the text again, so a shadow that changes no filter costs no filter work.
 */
export interface LiveFiltering {
  filters: CompiledFilters;
  decision: ExampleDecision;
}

/**
 * Decides a request under a shadow's policy with enforcement's rules in its order (region, model
 * lists, the endpoints' data policies, then the content filters), counting and changing
 * nothing: no metric, no counter, no answer depends on it. Budgets are not decided here.
 */
export async function decideUnderShadow(
  shadow: ShadowPolicy,
  req: ShadowedRequest,
  signal?: AbortSignal,
  live?: LiveFiltering,
): Promise<ExampleDecision> {
  const { policy } = shadow;
  const refused = (reason: string): ExampleDecision => ({ outcome: "refused", reason });
  if (policy.regions && !policy.regions.has(req.region))
    return refused(`region ${req.region} is not in allowed_data_regions`);
  const refusal = modelRefusal(policy, req.model);
  if (refusal) return refused(refusal.message);
  const rules = policyRules(policy, req.model, req.zdr);
  if (!req.model.endpoints.some((e) => rules.every((rule) => rule(e) === undefined)))
    return refused(`no endpoint of model ${req.model.id} is allowed`);
  if (shadow.filters.empty) return { outcome: "allowed", reason: "" };
  if (live && live.filters === shadow.filters) return live.decision;
  return decisionOfFilters(await applyFilters(shadow.filters, textParts(req), signal));
}

/** One running shadow's decision of a request. */
export interface ShadowDecision extends ExampleDecision {
  guardrailId: string;
  isPolicy?: true;
}

/**
 * Each running shadow's decision of the request (an expired one is ignored). A shadow that fails
 * to decide (say, a filter past its time) is left out: it must never cost the request anything.
 */
export async function shadowDecisions(
  shadows: readonly ShadowPolicy[],
  req: ShadowedRequest,
  nowMs: number,
  signal?: AbortSignal,
  live?: LiveFiltering,
): Promise<ShadowDecision[]> {
  const out: ShadowDecision[] = [];
  for (const s of shadows) {
    if (s.expiresAtMs <= nowMs) continue;
    const decided = await decideUnderShadow(s, req, signal, live).catch(() => undefined);
    if (decided)
      out.push({
        guardrailId: s.guardrailId,
        ...(s.isPolicy ? { isPolicy: s.isPolicy } : {}),
        ...decided,
      });
  }
  return out;
}

/** What the record carries: the first shadow whose outcome differs from the live one. */
export function differingShadow(
  decisions: readonly ShadowDecision[],
  live: ExampleOutcome,
): ShadowOutcome | undefined {
  const d = decisions.find((x) => x.outcome !== live);
  return (
    d &&
    create(ShadowOutcomeSchema, {
      guardrailId: d.guardrailId,
      policyId: d.isPolicy ? d.guardrailId : "",
      live,
      shadow: d.outcome,
      reason: d.reason,
    })
  );
}
