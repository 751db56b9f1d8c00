import { RE2JS } from "re2js";

/** One match: its span and capture groups (undefined when a group did not take part). */
export interface RegexMatch {
  start: number;
  end: number;
  groups: (string | undefined)[];
}

/** After this many matches a text is clearly busy: stop re-checking the rest with the DFA. */
const PRECHECKED_MATCHES = 8;

/**
 * Every non-empty match of `re` in `text`, left to right.
 * re2js's `test()` runs on a DFA and is an order of magnitude faster than a
 * matcher's `find()`, which pays most when it scans to the end and finds
 * nothing. So before each search the rest of the text is tested first (from
 * one character back, so \b sees its left neighbour: the test may say yes
 * for a match `find` then rejects, never no for one it would find).
 */
export function* findAll(re: RE2JS, text: string, groupCount = 0): Generator<RegexMatch> {
  const m = re.matcher(text);
  let from = 0;
  let found = 0;
  while (from <= text.length) {
    if (found < PRECHECKED_MATCHES && !re.test(from === 0 ? text : text.slice(from - 1))) return;
    if (!m.find(from)) return;
    const start = m.start();
    const end = m.end();
    from = end > start ? end : end + 1;
    if (end === start) continue;
    found++;
    const groups: (string | undefined)[] = [];
    for (let i = 1; i <= groupCount; i++) groups.push(m.group(i) ?? undefined);
    yield { start, end, groups };
  }
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
