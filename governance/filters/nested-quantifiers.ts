import { quote } from "../../platform/quote.js";
import { type Token, tokenize } from "./detectors/pattern-syntax.js";

/** A quantifier that repeats a variable number of times, more than once: *, +, {n,}, {n,m} with m > n. */
function repeatsVariably(t: Token | undefined): boolean {
  return t?.kind === "quantifier" && t.max > 1 && t.max !== t.min;
}

interface Group {
  start: number;
  /** A variably repeated piece somewhere inside (at any depth). */
  repeatsInside: boolean;
  /** Source of each top-level alternative, to find duplicates. */
  alternatives: string[];
  alternativeStart: number;
}

/**
 * Finds the constructs OpenRouter refuses in custom patterns because a
 * backtracking engine (JavaScript's) can take exponential time on them:
 * nested quantifiers, a variably repeated group that itself contains a
 * variably repeated piece (`(a+)+`, `(\w+\s?)*`), and a variably repeated
 * alternation with two identical alternatives (`(a|a)*`). Railgate's own
 * engine is linear whatever the pattern; refusing them keeps guardrails
 * portable and behaving as documented. Fixed counts are fine: `(\d{3}-){2}`,
 * `(ab)+`, `(a|b)*`. Returns the problem, or undefined.
 */
export function nestedQuantifierProblem(pattern: string): string | undefined {
  const tokens = tokenize(pattern);
  const root: Group = { start: -1, repeatsInside: false, alternatives: [], alternativeStart: 0 };
  const stack: Group[] = [root];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const current = stack[stack.length - 1] as Group;
    if (t.kind === "open") {
      stack.push({
        start: t.start,
        repeatsInside: false,
        alternatives: [],
        alternativeStart: t.end,
      });
    } else if (t.kind === "alternation") {
      current.alternatives.push(pattern.slice(current.alternativeStart, t.start));
      current.alternativeStart = t.end;
    } else if (t.kind === "close" && stack.length > 1) {
      stack.pop();
      current.alternatives.push(pattern.slice(current.alternativeStart, t.start));
      const outer = stack[stack.length - 1] as Group;
      const next = tokens[i + 1];
      if (repeatsVariably(next)) {
        const group = pattern.slice(current.start, next?.end);
        if (current.repeatsInside)
          return `nested quantifiers in ${quote(group, 60)}: a repeated group contains a repeated piece, which backtracking engines can take exponential time on`;
        const seen = new Set<string>();
        for (const alternative of current.alternatives) {
          if (seen.has(alternative))
            return `duplicate alternatives in ${quote(group, 60)}: a repeated alternation with two identical branches, which backtracking engines can take exponential time on`;
          seen.add(alternative);
        }
      }
      outer.repeatsInside ||= current.repeatsInside || repeatsVariably(next);
    } else if (t.kind === "quantifier" && repeatsVariably(t)) {
      // A quantifier after a close was handled with its group above.
      if (tokens[i - 1]?.kind !== "close") current.repeatsInside = true;
    }
  }
  return undefined;
}
