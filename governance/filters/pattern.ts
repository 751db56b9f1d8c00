import { RE2JS } from "re2js";
import { withJsWhitespace } from "./detectors/js-whitespace.js";
import { canMatchEmpty } from "./detectors/linear-scan.js";
import { nestedQuantifierProblem } from "./nested-quantifiers.js";

/**
 * Custom filter patterns run on RE2 (re2js) through the speech service's
 * linear scan: matching time is linear in the input, so no pattern can stall
 * a request. Patterns RE2 cannot run (backreferences, lookaround) are
 * rejected instead of falling back; so are nested quantifiers (`(a+)+`),
 * which OpenRouter refuses as unsafe for backtracking engines, and patterns
 * that can match the empty string ("a*", "(x)?", "\\b"): they would match
 * between every two characters, and are always a mistake for "a+", "(x)"
 * and the like. `\s` is checked as it runs, with JavaScript's meaning.
 * Returns the reason the pattern is unusable, or undefined when it is usable.
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return `${detail} (patterns run on a linear-time RE2 engine: backreferences and lookaround are not supported)`;
  }
  const nested = nestedQuantifierProblem(pattern);
  if (nested) return nested;
  // The program that will run: \s rewritten (see withJsWhitespace).
  if (canMatchEmpty(RE2JS.compile(withJsWhitespace(pattern))))
    return "it can match the empty string (use + instead of *, or make at least one character required)";
  return undefined;
}
