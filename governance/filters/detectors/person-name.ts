import type { Detector, Span } from "./detector.js";
import { type Lexicon, lexicon } from "./name-lexicon.js";
import {
  CUE_PAIRS,
  CUES_AFTER,
  CUES_BEFORE,
  DETERMINERS,
  NAME_PARTICLES,
  NAME_SUFFIXES,
  PLACE_PREFIXES,
  PLACE_PREPOSITIONS,
  TITLES,
} from "./name-lists.js";
import { streetAddressDetector } from "./street-address.js";
import { STREET_PREFIXES, STREET_TYPES } from "./street-words.js";
import { LOWER, PUNCT, TITLE, type Token, tokensOf, UPPER, WORD } from "./tokens.js";

/** How a capitalized word reads, from the lexicon alone. */
const STRONG = 0; // a name and not a common word: "Priya", "Kowalski"
const WEAK = 1; // a name and a common word, month or place: "Will", "Rose", "Paris"
const UNKNOWN = 2; // neither: "Oluwaseun", "Railgate", "Tokyo"
const COMMON = 3; // a common word and no name: "Yesterday", "Station"

/** SCOWL levels up to this count as common words (35: "common", 50: "less common"). */
const COMMON_LEVEL = 35;
/** A word this common (level 10) never continues a name in all-caps text ("JOHN SMITH WILL"). */
const VERY_COMMON_LEVEL = 10;

const titles = new Set(TITLES);
const suffixes = new Set(NAME_SUFFIXES);
const particles = new Set(NAME_PARTICLES);
const cuesBefore = new Set(CUES_BEFORE);
const cuePairs = new Set(CUE_PAIRS);
const cuesAfter = new Set(CUES_AFTER);
const determiners = new Set(DETERMINERS);
const placePrefixes = new Set(PLACE_PREFIXES);
const placePrepositions = new Set(PLACE_PREPOSITIONS);
const streetPrefixes = new Set(STREET_PREFIXES);
const streetTypes = new Set(STREET_TYPES);
/** Name prefixes glued with an apostrophe: O'Brien, D'Angelo. */
const APOSTROPHE_PREFIX = /^[od]['’]/;

function isPart(lx: Lexicon, w: string): boolean {
  if (lx.parts.has(w)) return true;
  const bare = w.replace(APOSTROPHE_PREFIX, "");
  if (bare !== w) return bare === "" || lx.parts.has(bare) || !lx.level.has(bare);
  return false;
}

function classify(lx: Lexicon, w: string): number {
  const common = (lx.level.get(w) ?? 99) <= COMMON_LEVEL || lx.notNames.has(w);
  if (isPart(lx, w)) return common ? WEAK : STRONG;
  if (common) return COMMON;
  // "Doe-Jones", "Al-Farsi", "Min-jun": the strongest reading of a part.
  if (w.includes("-")) {
    let best = UNKNOWN;
    for (const p of w.split("-")) {
      const c = classify(lx, p);
      if (c === STRONG) return STRONG;
      if (c === WEAK) best = WEAK;
    }
    return best;
  }
  return UNKNOWN;
}

/** "I", "I'm", "I'll": capitalized, never a name. */
const isPronoun = (t: Token) =>
  t.lower === "i" || t.lower.startsWith("i'") || t.lower.startsWith("i’");
/** Title case (acronyms are not names outside text in capitals), not a pronoun, not a title. */
const isCapitalized = (t: Token | undefined) =>
  t !== undefined && t.kind === WORD && t.caps === TITLE && !isPronoun(t) && !titles.has(t.lower);
const isPeriodAfter = (tokens: Token[], i: number) => {
  const next = tokens[i + 1];
  return next !== undefined && next.text === "." && !next.spaced;
};

const isTransparent = (t: Token) => t.kind === PUNCT && !/^[.!?:,;\-–—/&]$/.test(t.text);

/** Where a sentence starts, a capital letter says nothing about a name. */
function startsSentence(tokens: Token[], i: number): boolean {
  let j = i - 1;
  const t = tokens[i] as Token;
  if (t.newline || j < 0) return true;
  // Quotes, brackets and symbols (an emoji) between the sentence end and the word.
  while (j >= 0 && isTransparent(tokens[j] as Token)) j--;
  const prev = tokens[j];
  if (!prev) return true;
  if (prev.text === "!" || prev.text === "?" || prev.text === ":") return true;
  if (prev.text !== ".") return (tokens[j + 1] as Token).newline;
  // "Dr. Smith", "J. Smith": a period after a title or an initial ends no sentence.
  const before = tokens[j - 1];
  return !(
    before &&
    (titles.has(before.lower) || (before.caps === UPPER && before.text.length === 1))
  );
}

/** Sentences written in capitals: capitalization carries no sign of a name there. */
function shoutedSentences(tokens: Token[]): Uint8Array {
  const shouted = new Uint8Array(tokens.length);
  let from = 0;
  let upper = 0;
  let words = 0;
  const close = (to: number) => {
    if (words >= 2 && upper >= 0.8 * words) shouted.fill(1, from, to);
    from = to;
    upper = 0;
    words = 0;
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.newline) close(i);
    if (t.kind === WORD && t.text.length > 1) {
      words++;
      if (t.caps === UPPER) upper++;
    } else if (t.text === "." || t.text === "!" || t.text === "?") close(i + 1);
  }
  close(tokens.length);
  return shouted;
}

/** The index of the word before token `i`, past one comma ("Thanks, Emily"), or -1. */
function wordBefore(tokens: Token[], i: number): number {
  let j = i - 1;
  if (tokens[j]?.text === ",") j--;
  return tokens[j]?.kind === WORD ? j : -1;
}

function hasCueBefore(tokens: Token[], i: number): boolean {
  const j = wordBefore(tokens, i);
  const prev = tokens[j];
  if (!prev) return false;
  if (cuesBefore.has(prev.lower)) return true;
  const prev2 = tokens[j - 1];
  return prev2 !== undefined && cuePairs.has(`${prev2.lower} ${prev.lower}`);
}

interface Chain {
  /** Token indexes of the words, particles and suffix. */
  members: number[];
  /** Index of the last token the chain covers (a period after "Jr" or an initial). */
  last: number;
}

/** Capitalized words in a row, with particles, initials and a suffix: "Ludwig van Beethoven", "John F. Kennedy Jr.". */
function chainFrom(tokens: Token[], i: number): Chain {
  const members = [i];
  let last = i;
  for (;;) {
    const cur = tokens[last] as Token;
    if (cur.stem < cur.end) break; // a possessive ends the name
    let k = last + 1;
    // An initial's period: "John F. Kennedy".
    if (cur.caps === UPPER && cur.text.length === 1 && isPeriodAfter(tokens, last)) k++;
    const next = tokens[k];
    if (!next?.spaced || next.newline || next.kind !== WORD) break;
    if (next.caps === LOWER && particles.has(next.lower) && isCapitalized(tokens[k + 1])) {
      members.push(k, k + 1);
      last = k + 1;
      continue;
    }
    const initial = next.caps === UPPER && next.text.length === 1 && isPeriodAfter(tokens, k);
    if (!isCapitalized(next) && !initial) break;
    if (suffixes.has(next.lower)) {
      members.push(k);
      last = isPeriodAfter(tokens, k) ? k + 1 : k;
      break;
    }
    members.push(k);
    last = k;
  }
  return { members, last };
}

function spanOf(tokens: Token[], from: number, members: number[], last: number): Span {
  const end = tokens[last] as Token;
  const lastMember = tokens[members[members.length - 1] as number] as Token;
  // A trailing period belongs to "Jr." or an initial; a possessive never belongs to the name.
  return { start: (tokens[from] as Token).start, end: end === lastMember ? end.stem : end.end };
}

/**
 * Person names from a compiled gazetteer and a few rules, in one pass over
 * the tokens (see tokens.ts), in time linear in the text:
 * - a title and the capitalized words after it ("Dr. Mary O'Brien", "Mr Singh");
 * - capitalized words in a row, when the first is a given name or a name that
 *   is not a common word ("Will Turner", "Oluwaseun Adeyemi" after a cue or
 *   with a known surname), and none is a common word that is no name
 *   ("Victoria Station", "Golden Gate Bridge") nor a place prefix ("Mount",
 *   "San");
 * - a single capitalized name that is not a common word ("Kowalski went
 *   home"), or a given name that is also a word away from a sentence start
 *   ("ask Rose", "I hope Will remembers"), never a month, place or brand;
 * - after a cue ("my name is", "Dear", "Thanks,", "ask") or before one
 *   ("said"), any capitalized word that is not a common word;
 * - in capitals ("JOHN SMITH"): a given name and the name parts after it;
 * - in lower case ("ask jennifer lopez"): a given name that is no English word.
 * Misses: a lone given name that is also a word at a sentence start ("Carol
 * sang"), names unknown to the lists without a cue or a known part.
 */
function findNames(text: string): Span[] {
  const lx = lexicon();
  const tokens = tokensOf(text);
  const shouted = shoutedSentences(tokens);
  const spans: Span[] = [];
  const cls = (t: Token) => classify(lx, t.lower);
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i] as Token;
    if (t.kind !== WORD) {
      i++;
      continue;
    }
    // A title with a capitalized word after it.
    if (titles.has(t.lower) && t.caps !== LOWER) {
      const k = isPeriodAfter(tokens, i) ? i + 2 : i + 1;
      const next = tokens[k];
      if (isCapitalized(next) && (next as Token).spaced && !(next as Token).newline) {
        const chain = chainFrom(tokens, k);
        if (!shouted[i] || chain.members.some((m) => cls(tokens[m] as Token) !== COMMON)) {
          spans.push(spanOf(tokens, i, chain.members, chain.last));
          i = chain.last + 1;
          continue;
        }
      }
    }
    if (shouted[i]) {
      i = shoutedName(lx, tokens, i, spans);
      continue;
    }
    if (t.caps === LOWER) {
      i = lowerCaseName(lx, tokens, i, spans);
      continue;
    }
    if (!isCapitalized(t)) {
      i++;
      continue;
    }
    const chain = chainFrom(tokens, i);
    const next = chain.last + 1;
    if (decide(lx, tokens, chain))
      spans.push(spanOf(tokens, chain.members[0] as number, chain.members, chain.last));
    i = next;
  }
  // A street, a city or a PO box is not a person ("14 Rose Close", "Springfield, IL").
  const addresses = streetAddressDetector.find(text);
  if (addresses.length === 0) return spans;
  return spans.filter((n) => !addresses.some((a) => n.start < a.end && a.start < n.end));
}

/** A trusted given name (see name-lexicon.ts) that is not also a month, place or brand. */
const isGiven = (lx: Lexicon, w: string) => lx.given.has(w) && !lx.notNames.has(w);

/**
 * Whether a chain of capitalized words is a person's name; may drop common
 * words that open the chain (the chain is then shortened in place).
 */
function decide(lx: Lexicon, tokens: Token[], chain: Chain): boolean {
  const cls = (m: number) => classify(lx, (tokens[m] as Token).lower);
  const words = chain.members.filter((m) => !particles.has((tokens[m] as Token).lower));
  // Particles alone ("Der alte Leuchtturm", "Van" opening a sentence) name no one.
  if (words.length === 0) return false;
  // "Mount Everest", "San Francisco", "New York": a place, even where a sentence starts.
  if (placePrefixes.has((tokens[words[0] as number] as Token).lower)) return false;
  const initial = startsSentence(tokens, words[0] as number);
  // Words capitalized by the sentence start or a cue before the name: "Yesterday John Smith", "Ask Thomas".
  let first = 0;
  let cue = false;
  while (first < words.length - 1) {
    const w = tokens[words[first] as number] as Token;
    const c = cls(words[first] as number);
    const isCue = cuesBefore.has(w.lower);
    if (!(isCue || (initial && (c === COMMON || (c === WEAK && !lx.given.has(w.lower)))))) break;
    // "The Washington Post", "The Mississippi River": after an article, a thing.
    if (determiners.has(w.lower)) return false;
    cue ||= isCue;
    first++;
  }
  const kept = words.slice(first);
  const startIndex = kept[0] as number;
  chain.members = chain.members.slice(chain.members.indexOf(startIndex));
  const head = tokens[startIndex] as Token;
  const body = kept.filter((m) => !suffixes.has((tokens[m] as Token).lower));
  if (body.length === 0) return false;
  const classes = body.map(cls);
  const lastWord = tokens[body[body.length - 1] as number] as Token;
  const beforeIndex = first > 0 ? -1 : wordBefore(tokens, startIndex);
  const before = tokens[beforeIndex];
  const adjacent = before !== undefined && beforeIndex === startIndex - 1;
  cue ||=
    (first === 0 && hasCueBefore(tokens, startIndex)) ||
    cuesAfter.has(tokens[chain.last + 1]?.lower ?? "");
  if (classes.includes(COMMON) || placePrefixes.has(head.lower) || streetTypes.has(lastWord.lower))
    return false;
  if (adjacent && determiners.has(before.lower)) return false;
  if (before && streetPrefixes.has(before.lower)) return false;
  // Word surnames follow a name ("Neil Young"); two of them, or one inside, make a thing ("Kennedy Space Center").
  const wordLike = body.map(
    (m, n) => n > 0 && classes[n] === WEAK && !isGiven(lx, (tokens[m] as Token).lower),
  );
  const wordCount = wordLike.filter(Boolean).length;
  if (wordCount > 1 || (wordCount === 1 && !wordLike[wordLike.length - 1])) return false;
  if (cue) return true;
  const given = isGiven(lx, head.lower);
  if (body.length >= 2) {
    // A month that is also a given name is one before a surname: "May Chen", "April Ludgate".
    if (lx.given.has(head.lower) || classes[0] === STRONG) return true;
    return classes.includes(STRONG) && !(adjacent && placePrepositions.has(before.lower));
  }
  const c = classes[0] as number;
  const sentenceStart = first === 0 && initial;
  if (adjacent && placePrepositions.has(before.lower) && !given) return false;
  if (c === STRONG) return true;
  if (c === WEAK && given) return sentenceStart ? coordinated(lx, tokens, chain.last + 1) : true;
  return false;
}

/** "Faith and Victor": a given name at a sentence start joined to another name. */
function coordinated(lx: Lexicon, tokens: Token[], next: number): boolean {
  const and = tokens[next];
  const other = tokens[next + 1];
  if (!and || !other || (and.lower !== "and" && and.lower !== "or" && and.text !== "&"))
    return false;
  if (!isCapitalized(other)) return false;
  return isGiven(lx, other.lower) || classify(lx, other.lower) === STRONG;
}

/** In capitals: a given name that is not a very common word, and the name parts after it. */
function shoutedName(lx: Lexicon, tokens: Token[], i: number, spans: Span[]): number {
  const t = tokens[i] as Token;
  const level = lx.level.get(t.lower) ?? 99;
  if (t.caps !== UPPER || !lx.given.has(t.lower) || lx.notNames.has(t.lower) || level <= 20)
    return i + 1;
  let last = i;
  for (let k = i + 1; k < tokens.length; k++) {
    const w = tokens[k] as Token;
    if (
      w.kind !== WORD ||
      w.caps !== UPPER ||
      !w.spaced ||
      w.newline ||
      tokens[last]?.stem !== tokens[last]?.end
    )
      break;
    const wl = lx.level.get(w.lower) ?? 99;
    if (wl <= VERY_COMMON_LEVEL || lx.notNames.has(w.lower)) break;
    if (!isPart(lx, w.lower) && lx.level.has(w.lower)) break;
    last = k;
  }
  if (last > i || hasCueBefore(tokens, i)) spans.push(spanOf(tokens, i, [last], last));
  return last + 1;
}

/** In lower case: a given name that no English word list holds, and the name parts after it. */
function lowerCaseName(lx: Lexicon, tokens: Token[], i: number, spans: Span[]): number {
  const t = tokens[i] as Token;
  if (!lx.given.has(t.lower) || lx.level.has(t.lower) || lx.notNames.has(t.lower)) return i + 1;
  let last = i;
  for (let k = i + 1; k < tokens.length; k++) {
    const w = tokens[k] as Token;
    if (
      w.kind !== WORD ||
      w.caps !== LOWER ||
      !w.spaced ||
      w.newline ||
      tokens[last]?.stem !== tokens[last]?.end
    )
      break;
    if (!isPart(lx, w.lower) || lx.level.has(w.lower) || lx.notNames.has(w.lower)) break;
    last = k;
  }
  spans.push(spanOf(tokens, i, [last], last));
  return last + 1;
}

export const personNameDetector: Detector = {
  warm(): void {
    lexicon();
  },
  find(text: string): Span[] {
    return findNames(text);
  },
};
