import type { Detector, Pretested, Span } from "./detector.js";
import { builtinRegex, findAll, standsAlone } from "./regex.js";

/** The Luhn (mod 10) checksum every payment card number carries. */
export function passesLuhn(digits: string): boolean {
  if (!/^\d+$/.test(digits)) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

/** A run of 13 or more digits, single spaces or dashes allowed between them. */
const DIGIT_RUN = builtinRegex(String.raw`\d(?:[ \-]?\d){12,}`);
const MIN_DIGITS = 13;
const MAX_DIGITS = 19;

interface Group {
  start: number;
  end: number;
  digits: string;
  /** The character just before the group (a space or dash inside a run). */
  before: string;
}

function groupsOf(text: string, start: number, end: number): Group[] {
  const groups: Group[] = [];
  const re = /\d+/g;
  re.lastIndex = start;
  for (let m = re.exec(text); m && m.index < end; m = re.exec(text)) {
    groups.push({
      start: m.index,
      end: m.index + m[0].length,
      digits: m[0],
      before: text[m.index - 1] ?? "",
    });
  }
  return groups;
}

/**
 * Printed exactly as a 16-digit card is, four groups of four joined by the
 * same separator ("4265 5256 0839 8752", "4265-5256-0839-8752"), from a
 * payment-card issuer range (first digit 2-6): a card even when its checksum
 * fails, as OpenRouter's preset documents; a mistyped card number is still
 * one. Other shapes need the checksum.
 */
function cardShaped(groups: Group[], from: number, to: number): boolean {
  if (to - from !== 3) return false;
  const first = groups[from] as Group;
  if (first.digits[0] === undefined || first.digits[0] < "2" || first.digits[0] > "6") return false;
  const separator = (groups[from + 1] as Group).before;
  for (let k = from; k <= to; k++) {
    const g = groups[k] as Group;
    if (g.digits.length !== 4 || (k > from && g.before !== separator)) return false;
  }
  return true;
}

/**
 * Card numbers are printed as one block of digits or in groups of 3-6
 * (4-4-4-4, 4-6-5, 4-4-4-4-3): a window of groups is a card when its shape
 * fits and its digits pass Luhn. Requiring the shape keeps lists of small
 * numbers ("1 2 3 ... 13") from ever being considered.
 */
function cardsIn(groups: Group[]): Span[] {
  const spans: Span[] = [];
  let i = 0;
  while (i < groups.length) {
    let found: Span | undefined;
    let digits = "";
    const windows: { end: number; digits: string }[] = [];
    for (let j = i; j < groups.length; j++) {
      const g = groups[j] as Group;
      const single = j === i && g.digits.length >= MIN_DIGITS;
      if (!single && (g.digits.length < 3 || g.digits.length > 6)) break;
      digits += g.digits;
      if (digits.length > MAX_DIGITS) break;
      windows.push({ end: j, digits });
      if (single) break;
    }
    // Longest first: "4111 1111 1111 1111" must not stop at a shorter prefix.
    for (let k = windows.length - 1; k >= 0 && !found; k--) {
      const w = windows[k] as { end: number; digits: string };
      if (w.digits.length >= MIN_DIGITS && (passesLuhn(w.digits) || cardShaped(groups, i, w.end))) {
        found = { start: (groups[i] as Group).start, end: (groups[w.end] as Group).end };
        i = w.end + 1;
      }
    }
    if (!found) i++;
    else spans.push(found);
  }
  return spans;
}

/**
 * 13-19 digit payment card numbers (optionally grouped with spaces or
 * dashes) that pass the Luhn check, and any number printed in the 4-4-4-4
 * card layout (see cardShaped). Not caught: numbers split by other
 * characters ("4111.1111..."), or written with digits in words. About one in
 * ten random 13-19 digit numbers passes Luhn, so long IDs shaped like cards
 * can be caught too.
 */
export const creditCardDetector: Detector = {
  regexes: [DIGIT_RUN],
  find(text: string, pretested?: Pretested): Span[] {
    const spans: Span[] = [];
    for (const run of findAll(DIGIT_RUN, text, pretested)) {
      for (const card of cardsIn(groupsOf(text, run.start, run.end))) {
        // Spaces and dashes may join a card to neighbouring groups the window already left out.
        if (standsAlone(text, card.start, card.end, ".")) spans.push(card);
      }
    }
    return spans;
  },
};
