import { RE2JS } from "re2js";
import type { Detector, Pretested, Span } from "./detector.js";
import { withJsWhitespace } from "./js-whitespace.js";
import { findAll } from "./regex.js";

/** Names the construct RE2 refused, when it is one users commonly reach for. */
function unsupportedConstruct(pattern: string): string | undefined {
  if (/\(\?<?[=!]/.test(pattern))
    return "lookaround ((?=...), (?!...), (?<=...), (?<!...)) is not supported";
  if (/\\[1-9]/.test(pattern)) return "backreferences (\\1 ...) are not supported";
  return undefined;
}

/**
 * The one way a custom pattern becomes a program: RE2 syntax (as validated
 * when the guardrail was saved, see pattern.ts), no flags: a pattern opts
 * into (?i) itself. `\s` and `\S` take JavaScript's meaning (see
 * withJsWhitespace); the pattern is checked as written first, so a problem
 * names what the user wrote, not the rewrite. Returns the program that runs,
 * or why RE2 refused the pattern.
 */
export function compileCustomPattern(pattern: string): { re: RE2JS } | { problem: string } {
  try {
    RE2JS.compile(pattern);
    return { re: RE2JS.compile(withJsWhitespace(pattern)) };
  } catch (err) {
    const construct = unsupportedConstruct(pattern);
    if (construct) return { problem: `${construct} (patterns run on a linear-time RE2 engine)` };
    const detail = err instanceof Error ? err.message : String(err);
    return {
      problem: `${detail} (patterns run on a linear-time RE2 engine: backreferences and lookaround are not supported)`,
    };
  }
}

/** compileCustomPattern for a stored rule: a pattern RE2 refuses throws, naming the pattern. */
export function compilePattern(pattern: string): RE2JS {
  if (pattern.length === 0) throw new Error("Invalid custom filter pattern: the pattern is empty");
  const compiled = compileCustomPattern(pattern);
  if ("problem" in compiled)
    throw new Error(
      `Invalid custom filter pattern ${JSON.stringify(pattern)}: ${compiled.problem}`,
    );
  return compiled.re;
}

/**
 * Every non-empty match of a guardrail's own pattern, in time linear in the
 * text whatever the pattern. Patterns that can match the empty string are
 * refused when a guardrail is saved; one stored before that still runs, its
 * empty matches ignored rather than redacting "nothing" between every character.
 */
export function customPatternDetector(re: RE2JS): Detector {
  return {
    regexes: [re],
    find(text: string, pretested?: Pretested): Span[] {
      return findAll(re, text, pretested);
    },
  };
}
