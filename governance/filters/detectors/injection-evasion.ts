import type { Span } from "./detector.js";
import { ENCODED_KEYWORDS, SCRAMBLE_TARGETS, SPACED_KEYWORDS } from "./injection-patterns.js";

/**
 * The evasions OpenRouter's prompt-injection guardrail undoes before
 * matching (typoglycemia, character spacing, Base64 and hex). Each pass is
 * one left-to-right scan of the text plus work proportional to what it
 * finds, so the whole check stays linear in the text (inputs are at most
 * 10,000 characters); ordinary prose costs a few regular-expression scans
 * that find nothing.
 */

/** A text rewritten so that evasions read plainly, and where each of its characters came from. */
export interface Rewritten {
  text: string;
  /** Offset in the original text of each character of `text` (plus one past the end). */
  origin?: number[];
}

const isLetter = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

const lettersKey = (word: string) =>
  `${word[0]}${word[word.length - 1]}${[...word.slice(1, -1)].sort().join("")}`;

/** Scrambled spelling (first, last letter and letter count kept) -> the word. */
const SCRAMBLED = new Map(SCRAMBLE_TARGETS.map((w) => [lettersKey(w), w]));
/**
 * Words shaped like a target (its first and last letter, its length), in any
 * case: one native regular-expression scan finds the few candidates, which
 * are then checked letter by letter.
 */
const CANDIDATE = new RegExp(
  `\\b(?:${[...new Set(SCRAMBLE_TARGETS.map((w) => `${w[0]}[a-z]{${w.length - 2}}${w.at(-1)}`))].join("|")})\\b`,
  "gi",
);

/**
 * Typoglycemia: words whose inner letters were shuffled ("ignroe all
 * prevoius insturctions"), written back as the word they scramble. The
 * rewrite keeps every length, so offsets need no mapping. Undefined when
 * nothing was scrambled, the common case.
 */
export function unscrambled(text: string): Rewritten | undefined {
  let out: string[] | undefined;
  CANDIDATE.lastIndex = 0;
  for (let m = CANDIDATE.exec(text); m; m = CANDIDATE.exec(text)) {
    const word = m[0].toLowerCase();
    const target = SCRAMBLED.get(lettersKey(word));
    if (target === undefined || target === word) continue;
    // UTF-16 units, as the match offsets are; the word is ASCII letters.
    out ??= text.split("");
    for (let k = 0; k < target.length; k++) out[m.index + k] = target[k] as string;
  }
  return out && { text: out.join("") };
}

const isBlank = (c: number) => c === 32 || c === 9;
/** A letter with no letter on either side. */
const isSingle = (text: string, i: number) =>
  isLetter(text.charCodeAt(i)) &&
  !isLetter(text.charCodeAt(i - 1)) &&
  !isLetter(text.charCodeAt(i + 1));
/** Single letters in a row before a run counts as spacing, not as initials ("J. R. R."). */
const MIN_SPACED_LETTERS = 4;
/** Whether there is such a run at all: one scan that most texts fail at every letter. */
const SPACED_RUN = /(?<![A-Za-z])[A-Za-z](?:[ \t]+[A-Za-z](?![A-Za-z])){3}/;

/**
 * Character spacing: runs of single letters separated by blanks ("i g n o r e
 * p r e v i o u s") collapsed into words, one blank inside a run removed and
 * a longer one kept as a word break. Undefined when the text has no run of
 * at least four spaced letters.
 */
export function collapsedSpacing(text: string): Rewritten | undefined {
  if (!SPACED_RUN.test(text)) return undefined;
  let out = "";
  const origin: number[] = [];
  let changed = false;
  let i = 0;
  while (i < text.length) {
    // A run: single letters, each followed by blanks and another single letter.
    let j = i;
    let letters = 0;
    if (isSingle(text, i)) {
      letters = 1;
      for (;;) {
        let k = j + 1;
        while (k < text.length && isBlank(text.charCodeAt(k))) k++;
        if (k === j + 1 || !isSingle(text, k)) break;
        j = k;
        letters++;
      }
    }
    if (letters < MIN_SPACED_LETTERS) {
      out += text[i];
      origin.push(i);
      i++;
      continue;
    }
    changed = true;
    for (let k = i; k <= j; k++) {
      if (isLetter(text.charCodeAt(k))) {
        out += text[k];
        origin.push(k);
      } else if (isBlank(text.charCodeAt(k)) && isBlank(text.charCodeAt(k + 1))) {
        // The first blank of two or more is the word break.
        if (!isBlank(text.charCodeAt(k - 1))) {
          out += " ";
          origin.push(k);
        }
      }
    }
    i = j + 1;
  }
  if (!changed) return undefined;
  origin.push(text.length);
  return { text: out, origin };
}

/** The spaced-out runs of `collapsed` that spell a keyword, as spans of the original text. */
export function spacedKeywords(collapsed: Rewritten): Span[] {
  const spans: Span[] = [];
  const origin = collapsed.origin as number[];
  const lower = collapsed.text.toLowerCase();
  for (const keyword of SPACED_KEYWORDS) {
    for (let at = lower.indexOf(keyword); at >= 0; at = lower.indexOf(keyword, at + 1)) {
      const start = origin[at] as number;
      const end = (origin[at + keyword.length - 1] as number) + 1;
      // Only where the letters were spaced apart in the original.
      if (end - start > keyword.length) spans.push({ start, end });
    }
  }
  return spans;
}

/** Decoded bytes that read as text: printable ASCII and ordinary whitespace. */
function readable(bytes: Uint8Array): boolean {
  let printable = 0;
  for (const b of bytes) if ((b >= 32 && b < 127) || b === 9 || b === 10 || b === 13) printable++;
  return bytes.length > 0 && printable >= bytes.length * 0.9;
}

function hasKeyword(bytes: Uint8Array): boolean {
  if (!readable(bytes)) return false;
  const text = Buffer.from(bytes).toString("latin1").toLowerCase();
  return ENCODED_KEYWORDS.some((k) => text.includes(k));
}

/**
 * A Base64 run (standard or URL-safe alphabet) that looks encoded: it holds a
 * digit, a symbol or a capital after a small letter, which a plain word does
 * not. Anchored at the start of a run (the lookbehind), so each run is tried
 * once and the scan stays linear.
 */
const BASE64_RUN = /(?<![\w+/-])[A-Za-z]*?(?:[0-9+/_-]|[a-z][A-Z])[\w+/-]*={0,2}/g;
/** The shortest run worth decoding: 8 characters hold 6 bytes, the shortest keyword. */
const MIN_BASE64 = 8;

/** Base64 runs that decode to text naming an injection keyword ("aWdub3JlIGFsbA==" is "ignore all"). */
export function base64Injections(text: string): Span[] {
  const spans: Span[] = [];
  BASE64_RUN.lastIndex = 0;
  for (let m = BASE64_RUN.exec(text); m; m = BASE64_RUN.exec(text)) {
    const run = m[0];
    const body = run.replace(/=+$/, "").length;
    if (body < MIN_BASE64 || body % 4 === 1) continue;
    if (hasKeyword(Buffer.from(run, "base64")))
      spans.push({ start: m.index, end: m.index + run.length });
  }
  return spans;
}

/**
 * Hex pairs, contiguous or separated by one space, colon or dash, each
 * optionally written 0x41 or \x41: at least six (the shortest keyword).
 */
const HEX_RUN = /(?:\\x|0x)?[0-9a-f]{2}(?:[ :-]?(?:\\x|0x)?[0-9a-f]{2}){5,}/gi;
const HEX_PAIR = /[0-9a-f]{2}/gi;

/** Hex runs that decode to text naming an injection keyword ("69 67 6e 6f 72 65" is "ignore"). */
export function hexInjections(text: string): Span[] {
  const spans: Span[] = [];
  HEX_RUN.lastIndex = 0;
  for (let m = HEX_RUN.exec(text); m; m = HEX_RUN.exec(text)) {
    // Drop the 0x / \x prefixes, then read the pairs.
    const digits = m[0].replace(/0x|\\x/gi, "");
    const bytes = Uint8Array.from(digits.match(HEX_PAIR) ?? [], (h) => Number.parseInt(h, 16));
    if (hasKeyword(bytes)) spans.push({ start: m.index, end: m.index + m[0].length });
  }
  return spans;
}
