import { compileCustomPattern } from "./detectors/custom-pattern.js";
import { canMatchEmpty } from "./detectors/linear-scan.js";
import { LITERAL_LIST_MIN_CHARS, literalList } from "./detectors/literal-list.js";
import { nestedQuantifierProblem } from "./nested-quantifiers.js";

/**
 * Custom filter patterns run on RE2 (re2js) through the speech service's
 * linear scan: matching time is linear in the input, so no pattern can stall
 * a request. Patterns RE2 cannot run (backreferences, lookaround) are
 * rejected instead of falling back; so are nested quantifiers (`(a+)+`),
 * which OpenRouter refuses as unsafe for backtracking engines, and patterns
 * that can match the empty string ("a*", "(x)?", "\\b"): they would match
 * between every two characters, and are always a mistake for "a+", "(x)"
 * and the like. The program checked is the one the filter engine compiles
 * (compileCustomPattern), so `\s` is checked as it runs, with JavaScript's
 * meaning, and a pattern accepted here is one CompiledFilters can run.
 * Returns the reason the pattern is unusable, or undefined when it is usable.
 */
export function patternProblem(pattern: string): string | undefined {
  // A long word list is valid RE2 that cannot match the empty string (literalList reads no
  // other shape), and it runs on an automaton: compiling it on RE2 too would take a second.
  if (pattern.length > LITERAL_LIST_MIN_CHARS && literalList(pattern)) return undefined;
  const compiled = compileCustomPattern(pattern);
  if ("problem" in compiled) return compiled.problem;
  const nested = nestedQuantifierProblem(pattern);
  if (nested) return nested;
  if (canMatchEmpty(compiled.re))
    return "it can match the empty string (use + instead of *, or make at least one character required)";
  return undefined;
}
