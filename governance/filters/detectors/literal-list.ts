import AhoCorasick from "modern-ahocorasick";
import type { Detector, Span } from "./detector.js";

/**
 * Custom patterns longer than this that are lists of words run on an
 * Aho-Corasick automaton instead of RE2 (see literalListDetector). Up to it,
 * every pattern keeps the engine it always had (this was the length limit).
 */
export const LITERAL_LIST_MIN_CHARS = 1_000;

/** One alternative of a word list: its text, and whether `\b` stands before and after it. */
export interface ListedWord {
  text: string;
  boundaryBefore: boolean;
  boundaryAfter: boolean;
}

/** A pattern that is only a list of literal alternatives. */
export interface LiteralList {
  words: ListedWord[];
  /** The pattern began with `(?i)`. */
  ignoreCase: boolean;
}

/** ASCII punctuation: RE2 takes `\` before any of it as that character itself. */
const ESCAPABLE = /^[!-/:-@[-`{-~]$/;
/** What is not a literal outside an escape (RE2 operators, classes, repetition, anchors). */
const META = new Set(["\\", ".", "+", "*", "?", "(", ")", "|", "[", "]", "{", "}", "^", "$"]);

/**
 * Reads `pattern` as a list of literal words, the shape a long pattern
 * almost always has (a term list): `word|word|...`, optionally led by `(?i)`,
 * optionally wrapped in one group `(...)` or `(?:...)` with `\b` before and
 * after it, and each word optionally between `\b`s of its own. A word is
 * literal characters and backslash-escaped punctuation. Anything else
 * (classes, repetition, other escapes, other flags) is not a list: undefined,
 * and the pattern runs on RE2 as any other. Every pattern read here is valid
 * RE2 that cannot match the empty string.
 */
export function literalList(pattern: string): LiteralList | undefined {
  let p = pattern;
  const ignoreCase = p.startsWith("(?i)");
  if (ignoreCase) p = p.slice(4);
  let outerBefore = false;
  let outerAfter = false;
  const group = /^(\\b)?\((\?:)?/.exec(p);
  if (group && (p.endsWith(")") || p.endsWith(")\\b"))) {
    outerBefore = group[1] !== undefined;
    outerAfter = p.endsWith(")\\b");
    p = p.slice(group[0].length, p.length - (outerAfter ? 3 : 1));
  } else if (p.startsWith("\\b(")) {
    return undefined;
  }
  const words: ListedWord[] = [];
  let text = "";
  let boundaryBefore = false;
  let boundaryAfter = false;
  const finish = (): boolean => {
    if (text === "") return false;
    words.push({
      text,
      boundaryBefore: boundaryBefore || outerBefore,
      boundaryAfter: boundaryAfter || outerAfter,
    });
    text = "";
    boundaryBefore = false;
    boundaryAfter = false;
    return true;
  };
  for (let i = 0; i < p.length; ) {
    const c = p[i] as string;
    if (boundaryAfter && c !== "|") return undefined;
    if (c === "|") {
      if (!finish()) return undefined;
      i++;
    } else if (c === "\\") {
      const next = p[i + 1];
      if (next === "b") {
        // Only at a word's edges: "\b" inside one is not a literal.
        if (text === "" && !boundaryBefore) boundaryBefore = true;
        else if (text !== "") boundaryAfter = true;
        else return undefined;
      } else if (next !== undefined && ESCAPABLE.test(next)) {
        text += next;
      } else {
        return undefined;
      }
      i += 2;
    } else if (META.has(c)) {
      return undefined;
    } else {
      // A whole code point: a surrogate pair is one character.
      const width = (p.codePointAt(i) as number) > 0xffff ? 2 : 1;
      text += p.slice(i, i + width);
      i += width;
    }
  }
  if (!finish()) return undefined;
  return { words, ignoreCase };
}

const isWordUnit = (c: number) =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** RE2's `\b` (ASCII word characters) between text[pos - 1] and text[pos]; the edges are non-word. */
function boundaryAt(text: string, pos: number): boolean {
  const before = pos > 0 && isWordUnit(text.charCodeAt(pos - 1));
  const after = pos < text.length && isWordUnit(text.charCodeAt(pos));
  return before !== after;
}

/** Each non-ASCII code point's case-folded stand-in (itself when it has none), as computed. */
const folded = new Map<number, string>();

/**
 * One representative of a code point's case orbit, of the same UTF-16 length: the lower case
 * of its upper case, where each is one code point (k, K and the Kelvin sign K all give k; s, S
 * and the long s give s; sigma's three forms give one). Offsets in a folded text are those of
 * the original. The dotless i is its own, as in RE2, which folds it with nothing.
 */
function foldCodePoint(cp: number): string {
  const known = folded.get(cp);
  if (known !== undefined) return known;
  const c = String.fromCodePoint(cp);
  let out = c;
  if (cp !== 0x131) {
    const upper = c.toUpperCase();
    const base = [...upper].length === 1 ? upper : c;
    const lower = base.toLowerCase();
    out = [...lower].length === 1 ? lower : base;
    if (out.length !== c.length) out = c;
  }
  folded.set(cp, out);
  return out;
}

/** `text` with every letter replaced by its case stand-in (see foldCodePoint); same length. */
export function foldCase(text: string): string {
  let out = "";
  let run = 0;
  for (let i = 0; i < text.length; ) {
    const unit = text.charCodeAt(i);
    if (unit < 0x80) {
      // ASCII: only A-Z change; copied in runs.
      if (unit >= 65 && unit <= 90) {
        out += text.slice(run, i) + String.fromCharCode(unit + 32);
        run = i + 1;
      }
      i++;
      continue;
    }
    const cp = text.codePointAt(i) as number;
    const width = cp > 0xffff ? 2 : 1;
    const f = foldCodePoint(cp);
    if (f !== text.slice(i, i + width)) {
      out += text.slice(run, i) + f;
      run = i + width;
    }
    i += width;
  }
  return run === 0 ? text : out + text.slice(run);
}

/** Automata built, for tests that prove a list is compiled once per guardrail version. */
export const literalListStats = { automataBuilt: 0 };

/**
 * Every match of a word list, as RE2 finds them for the same pattern:
 * leftmost first, and at one position the first word in the list's order
 * whose `\b`s hold; then on from where it ended. The automaton reports every
 * occurrence of every word in one pass over the text (time linear in the text
 * plus the occurrences, whatever the list's length), the `\b`s are checked
 * per occurrence, and the selection is a sort. Built once per compiled
 * filter set, which is cached per guardrail version.
 *
 * Differences from RE2, for lists only (longer than LITERAL_LIST_MIN_CHARS):
 * a word matches whole grapheme clusters (so "e" does not match the "e" of an
 * "e" followed by a combining accent), and `(?i)` folds each character to the
 * lower case of its upper case (see foldCodePoint), which agrees with RE2's
 * case orbits for the scripts that have case.
 */
export function literalListDetector(list: LiteralList): Detector {
  const fold = list.ignoreCase ? foldCase : (t: string) => t;
  const automaton = new AhoCorasick(list.words.map((w) => fold(w.text)));
  literalListStats.automataBuilt++;
  const { words } = list;
  return {
    find(text: string): Span[] {
      const candidates: { start: number; end: number; index: number }[] = [];
      // Folding keeps every offset, so the automaton's ranges are the original text's, and
      // the \b checks read the original characters.
      for (const m of automaton.iterate(fold(text))) {
        const word = words[m.patternIndex] as ListedWord;
        if (word.boundaryBefore && !boundaryAt(text, m.start)) continue;
        if (word.boundaryAfter && !boundaryAt(text, m.end)) continue;
        candidates.push({ start: m.start, end: m.end, index: m.patternIndex });
      }
      candidates.sort((a, b) => a.start - b.start || a.index - b.index);
      const spans: Span[] = [];
      let from = 0;
      for (const c of candidates) {
        if (c.start < from) continue;
        spans.push({ start: c.start, end: c.end });
        from = c.end;
      }
      return spans;
    },
  };
}
