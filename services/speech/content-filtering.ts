import { create } from "@bufbuild/protobuf";
import { type FilterOutcome, FilterOutcomeSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import { permissionDenied } from "../common/errors.js";
import type { SynthesisSegment } from "./engines/types.js";
import type { CompiledFilters, TextPart } from "./filters/index.js";

/**
 * Runs the policy's content filters over everything that would be
 * synthesized or steer synthesis (input, turns, instructions): block refuses
 * the request, redact rewrites the text before any engine sees it, flag only
 * records. Outcomes never carry the matched text.
 */
export function filterSegments(
  filters: CompiledFilters,
  segments: SynthesisSegment[],
): { segments: SynthesisSegment[]; outcomes: FilterOutcome[] } {
  if (filters.empty) return { segments, outcomes: [] };
  const parts: TextPart[] = [];
  for (const s of segments) {
    parts.push({ text: s.text, role: "user" });
    if (s.instructions) parts.push({ text: s.instructions, role: "instructions" });
  }
  const result = filters.apply(parts);
  if (result.blockedBy)
    throw permissionDenied(`Request blocked by content filter: ${result.blockedBy.label}`);
  let i = 0;
  const next = segments.map((s) => {
    const text = result.parts[i++]?.text ?? s.text;
    const instructions = s.instructions
      ? (result.parts[i++]?.text ?? s.instructions)
      : s.instructions;
    return { ...s, text, instructions };
  });
  return {
    segments: next,
    outcomes: result.outcomes.map((o) => create(FilterOutcomeSchema, o)),
  };
}
