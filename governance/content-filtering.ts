import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { ErrorReason } from "../gen/railgate/common/v1/error_info_pb.js";
import { type FilterOutcome, FilterOutcomeSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { permissionDenied, withErrorMetadata } from "../platform/errors.js";
import { admissionRefusals, guardrailFilterActions } from "../platform/metrics.js";
import type { ReferenceInput, SynthesisSegment } from "../services/speech/engines/types.js";
import {
  applyFilters,
  type Blocked,
  type CompiledFilters,
  type TextPart,
} from "./filters/index.js";

export interface FilteredText {
  segments: SynthesisSegment[];
  references: ReferenceInput[];
  outcomes: FilterOutcome[];
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
  segments: SynthesisSegment[],
  references: ReferenceInput[],
  signal?: AbortSignal,
): Promise<FilteredText> {
  if (filters.empty) return { segments, references, outcomes: [] };
  const parts: TextPart[] = [];
  for (const s of segments) {
    parts.push({ text: s.text, role: "user" });
    if (s.instructions) parts.push({ text: s.instructions, role: "instructions" });
  }
  // A transcript is the caller's own text, like the input.
  for (const r of references) if (r.kind === "text") parts.push({ text: r.value, role: "user" });
  const result = await applyFilters(filters, parts, signal);
  // One increment per rule that matched (not per match): what an operator alerts on is how
  // often a guardrail acted, the counts per request stay in the generation record.
  for (const o of result.outcomes) guardrailFilterActions.labels(o.slug, o.action).inc();
  if (result.blockedBy) {
    admissionRefusals.labels("filter-block").inc();
    throw blockedError(result.blockedBy);
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
    outcomes: result.outcomes.map((o) => create(FilterOutcomeSchema, o)),
  };
}
