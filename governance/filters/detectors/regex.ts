import { RE2JS } from "re2js";
import type { Pretested, Span } from "./detector.js";
import { findMatches, type ScanStats } from "./linear-scan.js";

/**
 * Every non-empty match of `re` in `text`, left to right, in time linear in
 * the text (see linear-scan.ts). re2js's `test()` runs on a DFA and answers
 * "no match at all", the common case, an order of magnitude faster than a
 * scan that tracks where matches start, so it goes first, unless `pretested` (a pass over
 * this very text) already answered it.
 */
export function findAll(re: RE2JS, text: string, pretested?: Pretested, stats?: ScanStats): Span[] {
  if (text.length === 0) return [];
  const known = pretested?.text === text ? pretested.matches(re) : undefined;
  if (known === false || (known === undefined && !re.test(text))) return [];
  return findMatches(re, text, stats);
}

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isAlnum = (c: string | undefined) => c !== undefined && /^[\p{L}\p{N}_]$/u.test(c);

/**
 * True when a number-like match is not a piece of a longer number: the
 * characters around it are not letters or digits, nor a separator that
 * continues into more digits ("1-555-..." seen from "555", "3.14" from "3").
 * RE2 has no lookaround, so this is checked after matching.
 */
export function standsAlone(text: string, start: number, end: number, separators = "-."): boolean {
  const before = text[start - 1];
  const after = text[end];
  if (isAlnum(before) || isAlnum(after)) return false;
  if (before !== undefined && separators.includes(before) && isDigit(text[start - 2])) return false;
  if (after !== undefined && separators.includes(after) && isDigit(text[end + 1])) return false;
  return true;
}

export function digitsOf(s: string): string {
  return s.replace(/\D/g, "");
}

/** Compiles a builtin's pattern; a failure here is a bug in the pattern, not user input. */
export function builtinRegex(pattern: string, flags = 0): RE2JS {
  return RE2JS.compile(pattern, flags);
}
