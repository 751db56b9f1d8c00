import type { Detector, Span } from "./detector.js";
import { lexicon } from "./name-lexicon.js";
import {
  AU_STATES,
  CA_PROVINCES,
  DIRECTIONS,
  GLUED_STREET_TYPES,
  STANDALONE_STREETS,
  STREET_PREFIXES,
  STREET_TYPES,
  STREET_TYPES_SPELLED,
  UNIT_WORDS,
  US_STATES,
} from "./street-words.js";
import { LOWER, NUMBER, PUNCT, TITLE, type Token, tokensOf, UPPER, WORD } from "./tokens.js";

const streetTypes = new Set(STREET_TYPES);
const spelledTypes = new Set(STREET_TYPES_SPELLED);
const standalone = new Set(STANDALONE_STREETS);
const streetPrefixes = new Set(STREET_PREFIXES);
const unitWords = new Set(UNIT_WORDS);
const directions = new Set(DIRECTIONS);
const usStates = new Set(US_STATES);
const caProvinces = new Set(CA_PROVINCES);
const auStates = new Set(AU_STATES);
const GLUED = new RegExp(`\\p{L}{3,}(?:${GLUED_STREET_TYPES.join("|")})$`, "u");
/** Small words inside a street's name: "rue de Rivoli", "avenue du Maine". */
const STREET_PARTICLES = new Set("de du des la le l del della di da do dos das den der".split(" "));

// Each is tested on one short token, never on the text.
const HOUSE_NUMBER = /^\d{1,6}[A-Za-z]?(?:-\d{1,6}[A-Za-z]?){0,2}$/;
const ORDINAL = /^\d{1,3}(?:st|nd|rd|th)$/i;
const ZIP = /^\d{5}(?:-\d{4})?$/;
/** Postcodes written as one number: DE/FR/ES/IT/US (5), NL/AU (4), IN (6), JP (3-4), PL (2-3). */
const POSTCODE_NUMBER = /^(?:\d{4,6}|\d{3}-\d{4}|\d{2}-\d{3}|\d{5}-\d{4})$/;
const UK_OUTWARD = /^[A-Z]{1,2}\d[A-Z\d]?$/;
const UK_INWARD = /^\d[A-Z]{2}$/;
const CA_FIRST = /^[A-Z]\d[A-Z]$/;
const CA_SECOND = /^\d[A-Z]\d$/;
const UNIT_VALUE = /^(?:\d{1,5}[A-Za-z]?|[A-Za-z]\d{0,3}|\d{1,3}-\d{1,3})$/;
const HAS_DIGIT = /\d/;

const isCap = (t: Token | undefined): t is Token =>
  t !== undefined && t.kind === WORD && (t.caps === TITLE || t.caps === UPPER);
/** The next token, if nothing but blanks (no line break) separate them. */
const spacedAfter = (tokens: Token[], k: number) => {
  const t = tokens[k];
  return t?.spaced && !t.newline ? t : undefined;
};
const gluedPeriod = (tokens: Token[], k: number) =>
  tokens[k]?.text === "." && !(tokens[k] as Token).spaced;

interface Street {
  start: number;
  last: number;
  /** Accepted only if a postcode (or state and ZIP) follows: a street without a number, a name without a type. */
  needsPostal: boolean;
}

/** "P.O. Box 12", "PO Box 12", "Post Office Box 12", "Rural Route 2, Box 17", "RR 2". */
function poBox(tokens: Token[], i: number): Street | undefined {
  const t = tokens[i] as Token;
  let k = i;
  if (t.lower === "p" && gluedPeriod(tokens, i + 1) && tokens[i + 2]?.lower === "o") {
    k = gluedPeriod(tokens, i + 3) ? i + 4 : i + 3;
  } else if (t.lower === "po") {
    k = gluedPeriod(tokens, i + 1) ? i + 2 : i + 1;
  } else if (t.lower === "post" && tokens[i + 1]?.lower === "office") {
    k = i + 2;
  } else if ((t.lower === "rural" && tokens[i + 1]?.lower === "route") || t.text === "RR") {
    const n = t.text === "RR" ? i + 1 : i + 2;
    if (tokens[n]?.kind !== NUMBER) return undefined;
    let last = n;
    if (
      tokens[n + 1]?.text === "," &&
      tokens[n + 2]?.lower === "box" &&
      tokens[n + 3]?.kind === NUMBER
    )
      last = n + 3;
    return { start: i, last, needsPostal: false };
  } else return undefined;
  if (tokens[k]?.lower !== "box" || t.caps === LOWER) return undefined;
  const n = tokens[k + 1];
  if (n?.kind !== NUMBER || !/^\d{1,6}$/.test(n.text)) return undefined;
  return { start: i, last: k + 1, needsPostal: false };
}

/** Not a piece of a longer number or amount: "$300", "20,000". */
function standsAlone(tokens: Token[], i: number): boolean {
  const prev = tokens[i - 1];
  if (!prev || (tokens[i] as Token).spaced) return true;
  return prev.kind === WORD ? false : !/[$€£,.\d-]/.test(prev.text);
}

/** House number, optional direction, name words, a type: "1600 Pennsylvania Avenue NW", "45 elm street". */
function numberedStreet(tokens: Token[], i: number): Street | undefined {
  const t = tokens[i] as Token;
  if (t.kind !== NUMBER || !HOUSE_NUMBER.test(t.text) || !standsAlone(tokens, i)) return undefined;
  let j = i + 1;
  const first = spacedAfter(tokens, j);
  if (!first || (first.kind !== WORD && !ORDINAL.test(first.text))) return undefined;
  // "12 rue de Rivoli", "5 avenue Victor Hugo".
  if (streetPrefixes.has(first.lower)) {
    const last = namedAfterPrefix(tokens, gluedPeriod(tokens, j + 1) ? j + 2 : j + 1);
    if (last >= 0) return { start: i, last, needsPostal: false };
  }
  if (directions.has(first.lower) && first.caps !== LOWER) {
    const k = gluedPeriod(tokens, j + 1) ? j + 2 : j + 1;
    const after = spacedAfter(tokens, k);
    if (after && (ORDINAL.test(after.text) || isCap(after))) j = k;
  }
  const lowerCase = tokens[j]?.caps === LOWER;
  const lx = lowerCase ? lexicon() : undefined;
  let lastType = -1;
  let count = 0;
  let k = j;
  for (; count < 5; k++) {
    const w = spacedAfter(tokens, k);
    if (!w) break;
    if (w.kind === NUMBER && ORDINAL.test(w.text)) {
      count++;
      continue;
    }
    if (w.kind !== WORD || HAS_DIGIT.test(w.text)) break;
    if (lowerCase) {
      if (w.caps !== LOWER) break;
      if (spelledTypes.has(w.lower) && count >= 1) lastType = k;
      // "5 miles down the road": a lower-case name is one or two words that are not very common.
      if (count >= 2 || (lx?.level.get(w.lower) ?? 99) <= 20) break;
    } else {
      if (!isCap(w)) break;
      if (streetTypes.has(w.lower) && count >= 1) lastType = k;
      if (standalone.has(w.lower) && count === 0) lastType = k;
    }
    count++;
    if (w.stem < w.end) break;
  }
  if (lastType >= 0) {
    let last = lastType;
    // A direction after the type: "Pennsylvania Avenue NW", "King Street West".
    const d = spacedAfter(tokens, last + 1);
    if (
      d &&
      directions.has(d.lower) &&
      (d.caps === UPPER || (d.caps === TITLE && d.text.length > 2))
    )
      last++;
    return { start: i, last, needsPostal: false };
  }
  // "45 Deansgate, Manchester M3 2AY": a name without a type, if a postcode follows.
  if (!lowerCase && count >= 1 && count <= 3 && tokens[j + count]?.text === ",")
    return { start: i, last: j + count - 1, needsPostal: true };
  return undefined;
}

/** After "rue", "Calle", "Via": particles and capitalized words; the last word's index, or -1. */
function namedAfterPrefix(tokens: Token[], k: number): number {
  let last = -1;
  for (; k < tokens.length; k++) {
    const w = spacedAfter(tokens, k);
    if (!w || w.kind !== WORD) break;
    if (isCap(w) && !HAS_DIGIT.test(w.text)) last = k;
    else if (!(w.caps === LOWER && STREET_PARTICLES.has(w.lower) && isCap(tokens[k + 1]))) break;
  }
  return last;
}

/** A number after the street: "Calle Mayor 5", "ul. Marszałkowska 10", "Friedrichstraße 43". */
function numberAfter(tokens: Token[], i: number): Street | undefined {
  const t = tokens[i] as Token;
  let last = -1;
  if (streetPrefixes.has(t.lower))
    last = namedAfterPrefix(tokens, gluedPeriod(tokens, i + 1) ? i + 2 : i + 1);
  else if (isCap(t) && GLUED.test(t.lower)) last = i;
  if (last < 0) return undefined;
  const n = spacedAfter(tokens, last + 1);
  if (n?.kind !== NUMBER || !HOUSE_NUMBER.test(n.text)) return undefined;
  return { start: i, last: last + 1, needsPostal: false };
}

/** "Main Street, Springfield, IL 62704": a street without a number, accepted if a postcode follows. */
function unnumberedStreet(tokens: Token[], i: number): Street | undefined {
  if (!isCap(tokens[i]) || streetTypes.has((tokens[i] as Token).lower)) return undefined;
  for (let k = i + 1; k < i + 4; k++) {
    const w = spacedAfter(tokens, k);
    if (!isCap(w)) return undefined;
    if (streetTypes.has(w.lower) && tokens[k + 1]?.text === ",")
      return { start: i, last: k, needsPostal: true };
  }
  return undefined;
}

/**
 * A postcode-bearing piece of a locality starting at token k: state + ZIP,
 * province + postcode, "NSW 2000", a UK postcode, or a postcode number with
 * the city after it ("10117 Berlin", "1015 CJ Amsterdam"). Its last token, or -1.
 */
function postalAt(tokens: Token[], k: number, afterComma: boolean): number {
  const t = tokens[k];
  if (!t) return -1;
  const next = spacedAfter(tokens, k + 1);
  if (usStates.has(t.text)) {
    if (next && ZIP.test(next.text)) return k + 1;
    // A bare state only after a comma: after a blank, "OR" and "IN" are words.
    if (afterComma && !isCap(next)) return k;
  }
  if (caProvinces.has(t.text) && next && CA_FIRST.test(next.text)) {
    const second = spacedAfter(tokens, k + 2);
    if (second && CA_SECOND.test(second.text)) return k + 2;
  }
  if (auStates.has(t.text) && next && /^\d{4}$/.test(next.text)) return k + 1;
  if (UK_OUTWARD.test(t.text) && next && UK_INWARD.test(next.text)) return k + 1;
  if (t.kind === NUMBER && POSTCODE_NUMBER.test(t.text)) {
    let last = k;
    const letters = spacedAfter(tokens, k + 1);
    if (letters?.kind === WORD && letters.caps === UPPER && letters.text.length === 2) last = k + 1;
    const city = cityAt(tokens, last + 1);
    return city >= 0 ? city : last;
  }
  return -1;
}

/** One to three capitalized words without digits ("San Francisco", "Minato-ku"); the last one's index, or -1. */
function cityAt(tokens: Token[], k: number): number {
  let last = -1;
  for (let n = 0; n < 3; n++, k++) {
    const w = tokens[k];
    if (!isCap(w) || (n > 0 && (!w.spaced || w.newline)) || HAS_DIGIT.test(w.text)) break;
    if (unitWords.has(w.lower) || (n > 0 && postalAt(tokens, k, false) >= 0)) break;
    last = k;
    if (w.stem < w.end) break;
  }
  return last;
}

const endsSentence = (tokens: Token[], k: number) => {
  const t = tokens[k];
  return !t || t.newline || t.text === "." || t.text === "!" || t.text === "?" || t.text === ";";
};

/** Units after the street: ", Suite 200", " Apt. 5C", " #12", ", Building B". The last token's index. */
function withUnits(tokens: Token[], last: number): number {
  for (;;) {
    let k = last + 1;
    if (gluedPeriod(tokens, k)) k++;
    if (tokens[k]?.text === ",") k++;
    const w = tokens[k];
    if (!w) return last;
    if (w.text === "#") k++;
    else if (w.kind === WORD && unitWords.has(w.lower) && w.caps !== LOWER && w.lower !== "box") {
      k++;
      if (gluedPeriod(tokens, k)) k++;
      if (tokens[k]?.text === "#") k++;
    } else return last;
    const v = tokens[k];
    if (!v || !UNIT_VALUE.test(v.text)) return last;
    last = k;
  }
}

/**
 * The locality after a street: cities, states, postcodes, each after a
 * comma (or a blank before a postcode). A city counts only if a postcode
 * follows it or it ends the sentence ("742 Evergreen Terrace, Springfield.");
 * "5 Main Street, and ..." stops at the street. The last token's index.
 */
function withLocality(tokens: Token[], last: number, needsPostal: boolean): number {
  let end = last;
  let city = -1;
  let k = last + 1;
  for (let step = 0; step < 6; step++) {
    if (gluedPeriod(tokens, k) && tokens[k + 1]?.text === ",") k++;
    const comma = tokens[k]?.text === ",";
    if (comma) k++;
    const t = tokens[k];
    if (!t || (!comma && (!t.spaced || (t.newline && city < 0)))) break;
    const postal = postalAt(tokens, k, comma);
    if (postal >= 0) {
      end = postal;
      city = -1;
      k = postal + 1;
      continue;
    }
    if (!comma && !t.newline) break;
    const c = cityAt(tokens, k);
    if (c < 0) break;
    // Dublin's postal districts: "Dublin 2".
    const district = spacedAfter(tokens, c + 1);
    if ((tokens[c] as Token).lower === "dublin" && district && /^\d{1,2}$/.test(district.text)) {
      end = c + 1;
      city = -1;
      k = c + 2;
      continue;
    }
    city = c;
    k = c + 1;
  }
  if (city >= 0 && !needsPostal && endsSentence(tokens, city + 1)) end = city;
  return needsPostal && end === last ? -1 : end;
}

/** "Flat 3, 27 Kings Road", "Level 5, 120 George Street": a unit before the street. */
function unitBefore(tokens: Token[], start: number): number {
  if (tokens[start - 1]?.text !== ",") return start;
  const value = tokens[start - 2];
  const word = tokens[start - 3];
  if (!value || !word || !UNIT_VALUE.test(value.text)) return start;
  if (word.kind === WORD && unitWords.has(word.lower) && word.caps !== LOWER) return start - 3;
  return start;
}

/**
 * Street addresses in one pass over the tokens (see tokens.ts), linear in
 * the text: a house number (221B, 12-14) with an optional direction, one to
 * four capitalized name words (or one or two lower-case ones) and a street
 * type ("42 Wallaby Way", "610 W 42nd St", "45 elm street"); "12 rue de
 * Rivoli", "Calle Mayor 5", "Friedrichstraße 43"; PO boxes and rural routes;
 * then units (Apt 4B, Suite 200, #12) and the locality that follows: US state
 * and ZIP, Canadian, Australian and UK postcodes, European postcode + city,
 * or a city ending the sentence. Without a number or a street type, only
 * when a postcode follows ("Main Street, Springfield, IL 62704", "45
 * Deansgate, Manchester M3 2AY"), and "City, ST 12345" alone.
 * Misses: a street name with neither number nor postcode ("on Baker Street",
 * by design), forms with neither a known type nor a postcode ("Unter den
 * Linden 77").
 */
function findAddresses(text: string): Span[] {
  const tokens = tokensOf(text);
  const spans: Span[] = [];
  let i = 0;
  while (i < tokens.length) {
    const t = tokens[i] as Token;
    if (t.kind === PUNCT) {
      i++;
      continue;
    }
    const street =
      poBox(tokens, i) ??
      numberedStreet(tokens, i) ??
      numberAfter(tokens, i) ??
      unnumberedStreet(tokens, i);
    if (street) {
      const withUnit = street.needsPostal ? street.last : withUnits(tokens, street.last);
      const last = withLocality(tokens, withUnit, street.needsPostal);
      if (last >= 0) {
        const start = unitBefore(tokens, street.start);
        spans.push({ start: (tokens[start] as Token).start, end: (tokens[last] as Token).end });
        i = last + 1;
        continue;
      }
    }
    // "Austin, TX 78701" on its own.
    if (isCap(t)) {
      const c = cityAt(tokens, i);
      if (c >= 0 && tokens[c + 1]?.text === ",") {
        const s = tokens[c + 2];
        const p = postalAt(tokens, c + 2, false);
        if (p > c + 2 && s && (usStates.has(s.text) || caProvinces.has(s.text))) {
          spans.push({ start: t.start, end: (tokens[p] as Token).end });
          i = p + 1;
          continue;
        }
      }
    }
    i++;
  }
  return spans;
}

let lastText: string | undefined;
let lastSpans: Span[] = [];

export const streetAddressDetector: Detector = {
  warm(): void {
    lexicon();
  },
  /** The person-name detector asks too (names inside an address are not people): the last answer is kept. */
  find(text: string): Span[] {
    if (text !== lastText) {
      lastSpans = findAddresses(text);
      lastText = text;
    }
    return lastSpans.map((s) => ({ ...s }));
  },
};
