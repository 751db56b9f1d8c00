/**
 * One pass over a text that cuts it into words, numbers and punctuation, for
 * the person-name and address detectors: both read the same tokens, so the
 * last text's tokens are kept and a second detector on it pays nothing.
 * Linear, no regular expression over the whole text: non-ASCII characters
 * alone are classified with a one-character Unicode test.
 */

export const WORD = 0;
export const NUMBER = 1;
export const PUNCT = 2;

/** Capitalization of a word (numbers and punctuation are NONE). */
export const NONE = 0;
export const LOWER = 1;
/** First letter upper case, some other letter lower case ("Mary", "McCarthy", "O'Brien"). */
export const TITLE = 2;
/** Every letter upper case, including a single letter ("NASA", "J"). */
export const UPPER = 3;
/** Lower case first, upper case later ("iPhone", "eBay"). */
export const MIXED = 4;

export interface Token {
  start: number;
  end: number;
  text: string;
  /** `text` in lower case, without a possessive "'s" / "’s" (which `end` still covers). */
  lower: string;
  kind: number;
  caps: number;
  /** End of the word without its possessive: where a name span stops. */
  stem: number;
  /** Whitespace (or nothing, at the text's start) separates it from the previous token. */
  spaced: boolean;
  /** That whitespace holds a line break. */
  newline: boolean;
}

const NON_ASCII_LETTER = /[\p{L}\p{M}]/u;

function isLetter(c: number, text: string, i: number): boolean {
  if (c < 128) return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
  return NON_ASCII_LETTER.test(text[i] as string);
}
const isDigit = (c: number) => c >= 48 && c <= 57;
const isSpace = (c: number) => c === 32 || c === 9 || c === 10 || c === 13 || c === 160;
const isApostrophe = (c: number) => c === 39 || c === 0x2019;
const isHyphen = (c: number) => c === 45 || c === 0x2010 || c === 0x2011;

function capsOf(text: string): number {
  let upper = 0;
  let lower = 0;
  let firstUpper: boolean | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    let up: boolean;
    let low: boolean;
    if (c < 128) {
      up = c >= 65 && c <= 90;
      low = c >= 97 && c <= 122;
    } else {
      const ch = text[i] as string;
      up = ch.toLowerCase() !== ch;
      low = ch.toUpperCase() !== ch;
    }
    if (!up && !low) continue;
    firstUpper ??= up;
    if (up) upper++;
    else lower++;
  }
  if (firstUpper === undefined) return NONE;
  if (lower === 0) return UPPER;
  if (upper === 0) return LOWER;
  return firstUpper ? TITLE : MIXED;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const n = text.length;
  let i = 0;
  let spaced = true;
  let newline = false;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      spaced = true;
      if (c === 10) newline = true;
      i++;
      continue;
    }
    const start = i;
    let kind = PUNCT;
    if (isLetter(c, text, i) || isDigit(c)) {
      kind = isDigit(c) ? NUMBER : WORD;
      i++;
      // Letters and digits, joined by one apostrophe or hyphen: "O'Brien", "Doe-Jones", "12-14", "221B".
      while (i < n) {
        const d = text.charCodeAt(i);
        if (isLetter(d, text, i) || isDigit(d)) i++;
        else if ((isApostrophe(d) || isHyphen(d)) && i + 1 < n) {
          const e = text.charCodeAt(i + 1);
          if (isLetter(e, text, i + 1) || isDigit(e)) i += 2;
          else break;
        } else break;
      }
    } else {
      i++;
    }
    const raw = text.slice(start, i);
    let stem = i;
    let lower = raw.toLowerCase();
    if (
      kind === WORD &&
      lower.length > 2 &&
      lower.endsWith("s") &&
      isApostrophe(lower.charCodeAt(lower.length - 2))
    ) {
      stem = i - 2;
      lower = lower.slice(0, -2);
    }
    tokens.push({
      start,
      end: i,
      text: raw,
      lower,
      kind,
      caps: kind === WORD ? capsOf(raw) : NONE,
      stem,
      spaced,
      newline,
    });
    spaced = false;
    newline = false;
  }
  return tokens;
}

let lastText: string | undefined;
let lastTokens: Token[] = [];

/** The tokens of `text`; the previous call's result when the text is the same. Do not mutate. */
export function tokensOf(text: string): Token[] {
  if (text !== lastText) {
    lastTokens = tokenize(text);
    lastText = text;
  }
  return lastTokens;
}
