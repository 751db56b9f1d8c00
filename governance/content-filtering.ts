import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import type { ReferenceInput, SynthesisSegment } from "../domain/catalog/speech-input.js";
import { FILTER_ACTIONS } from "../domain/enums.js";
import { admissionRefusals, guardrailFilterActions } from "../domain/metrics.js";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { FilterAction } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type FilterOutcome, FilterOutcomeSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { permissionDenied, withErrorMetadata } from "../platform/rpc/errors.js";
import { deciderOf, markDecidedBy } from "./decided-by.js";
import { labelOf } from "./filters/compiled-filters.js";
import {
  applyFilters,
  type Blocked,
  type CompiledFilters,
  type TextPart,
} from "./filters/index.js";
import type { FilterRuleSpec } from "./policy/types.js";

export interface FilteredText {
  segments: SynthesisSegment[];
  references: ReferenceInput[];
  outcomes: FilterOutcome[];
}

/**
 * The guardrail a rule's outcome comes from: the first (in precedence order: key, member,
 * workspace default) whose rule has the same slug, action and label. Compiled filter sets are
 * shared by content across guardrails, so the attribution is made here, from the policy.
 */
function ruleOf(
  rules: readonly FilterRuleSpec[],
  o: { slug: string; label: string; action: string },
): FilterRuleSpec | undefined {
  return rules.find((r) => r.slug === o.slug && r.action === o.action && labelOf(r) === o.label);
}

/** The policy a rule came from, when it stands for one ("" otherwise, as the record's field). */
function policyIdOf(rule: FilterRuleSpec | undefined): string {
  return rule?.policy ? rule.guardrailId : "";
}

const STRONGEST_FIRST = [FilterAction.BLOCK, FilterAction.REDACT, FilterAction.FLAG] as const;

/** The outcome that decided the request: a block, else a redaction, else a flag. */
export function decidingOutcome(outcomes: readonly FilterOutcome[]): FilterOutcome | undefined {
  for (const action of STRONGEST_FIRST) {
    const hit = outcomes.find((o) => o.action === action);
    if (hit) return hit;
  }
  return undefined;
}

/**
 * Thrown when a block rule matched: the client's error, and the outcomes so far (each with its
 * guardrail), which the request log records with the refusal.
 */
export class FilterBlocked extends Error {
  constructor(
    readonly error: ReturnType<typeof blockedError>,
    readonly outcomes: FilterOutcome[],
  ) {
    super(error.message);
  }
}

/**
 * The 403 a block answers with, worded as OpenRouter's guardrails word it:
 * "Request blocked by content filter: <name>" (a builtin's display name, or
 * a custom rule's label), and for prompt injection "Request blocked: prompt
 * injection patterns detected" with the names of the patterns that matched
 * in `error.metadata.patterns`. Never the matched text.
 */
function blockedError(blocked: Blocked) {
  if (blocked.patterns !== undefined)
    return withErrorMetadata(
      Code.PermissionDenied,
      ErrorReason.PROMPT_INJECTION_BLOCKED,
      "Request blocked: prompt injection patterns detected",
      { patterns: blocked.patterns },
    );
  return permissionDenied(
    ErrorReason.CONTENT_BLOCKED,
    `Request blocked by content filter: ${blocked.name}`,
  );
}

/** Every piece of text the content filters read, in the order filterText maps them back. */
export function filteredParts(
  segments: readonly SynthesisSegment[],
  references: readonly ReferenceInput[],
): TextPart[] {
  const parts: TextPart[] = [];
  for (const s of segments) {
    parts.push({ text: s.text, role: "user" });
    if (s.instructions) parts.push({ text: s.instructions, role: "instructions" });
  }
  // A transcript is the caller's own text, like the input.
  for (const r of references) if (r.kind === "text") parts.push({ text: r.value, role: "user" });
  return parts;
}

/**
 * Runs the policy's content filters over every piece of text that reaches a
 * provider (input, turns, instructions, and reference-clip transcripts):
 * block refuses the request, redact rewrites the text before any engine sees
 * it, flag only records. Outcomes never carry the matched text. Long texts
 * are filtered on a worker thread (see applyFilters); the promise settles
 * with the redacted text before anything is sent onwards.
 */
export async function filterText(
  filters: CompiledFilters,
  /** The policy's rules, each with its guardrail: who each outcome is attributed to. */
  rules: readonly FilterRuleSpec[],
  segments: SynthesisSegment[],
  references: ReferenceInput[],
  signal?: AbortSignal,
): Promise<FilteredText> {
  if (filters.empty) return { segments, references, outcomes: [] };
  const parts = filteredParts(segments, references);
  const result = await applyFilters(filters, parts, signal);
  // One increment per rule that matched (not per match): what an operator alerts on is how
  // often a guardrail acted, the counts per request stay in the generation record.
  for (const o of result.outcomes) guardrailFilterActions.labels(o.slug, o.action).inc();
  const outcomes = result.outcomes.map((o) =>
    // The engine names actions; the record carries the enum.
    create(FilterOutcomeSchema, {
      ...o,
      action: FILTER_ACTIONS.value(o.action),
      guardrailId: ruleOf(rules, o)?.guardrailId ?? "",
      policyId: policyIdOf(ruleOf(rules, o)),
    }),
  );
  if (result.blockedBy) {
    admissionRefusals.labels("filter-block").inc();
    const by = result.blockedBy;
    const error = markDecidedBy(
      blockedError(by),
      deciderOf(ruleOf(rules, { slug: by.slug, label: by.label, action: "block" })),
    );
    throw new FilterBlocked(error, outcomes);
  }
  let i = 0;
  const next = () => result.parts[i++]?.text;
  const filteredSegments = segments.map((s) => {
    const text = next() ?? s.text;
    const instructions = s.instructions ? (next() ?? s.instructions) : s.instructions;
    return { ...s, text, instructions };
  });
  const filteredReferences = references.map((r) =>
    r.kind === "text" ? { ...r, value: next() ?? r.value } : r,
  );
  return {
    segments: filteredSegments,
    references: filteredReferences,
    outcomes,
  };
}
