import { RE2JS } from "re2js";
import type { Detector, Span } from "./detector.js";
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
 * RE2 syntax (as validated when the guardrail was saved), no flags: a pattern
 * opts into (?i) itself. `\s` and `\S` take JavaScript's meaning (see
 * withJsWhitespace); the pattern is checked as written first, so an error
 * names what the user wrote, not the rewrite.
 */
export function compilePattern(pattern: string): RE2JS {
  if (pattern.length === 0) throw new Error("Invalid custom filter pattern: the pattern is empty");
  try {
    RE2JS.compile(pattern);
    return RE2JS.compile(withJsWhitespace(pattern));
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    const construct = unsupportedConstruct(pattern);
    throw new Error(
      `Invalid custom filter pattern ${JSON.stringify(pattern)}: ${construct ?? detail}` +
        " (patterns run on a linear-time RE2 engine)",
    );
  }
}

/**
 * Every non-empty match of a guardrail's own pattern, in time linear in the
 * text whatever the pattern. Patterns that can match the empty string are
 * refused when a guardrail is saved; one stored before that still runs, its
 * empty matches ignored rather than redacting "nothing" between every character.
 */
export function customPatternDetector(re: RE2JS): Detector {
  return {
    find(text: string): Span[] {
      return findAll(re, text);
    },
  };
}
