import { sharedCompiledFilters } from "./shared-compiled.js";
import type { FilterResult, FilterRule, TextPart } from "./types.js";

export interface FilterJob {
  /** filterSetKey of the rules. */
  key: string;
  /** Sent only after this thread answered `missing`: the rules travel once per thread and set. */
  rules?: readonly FilterRule[];
  parts: TextPart[];
}

export type FilterJobResult = { missing: true } | { missing: false; result: FilterResult };

/**
 * Runs in a piscina worker thread: each thread keeps its own cache of
 * compiled sets keyed by content, so a set is compiled once per thread and
 * guardrail version, and a job normally carries only its key and its text.
 */
export default function runFilterJob(job: FilterJob): FilterJobResult {
  const filters = job.rules
    ? sharedCompiledFilters.get(job.rules, job.key)
    : sharedCompiledFilters.peek(job.key);
  if (!filters) return { missing: true };
  return { missing: false, result: filters.apply(job.parts) };
}
