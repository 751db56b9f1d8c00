import type { RE2JS } from "re2js";
import { type Detector, normalizeSpans, type Span } from "./detector.js";
import { phrases, spanOf } from "./nlp.js";
import { builtinRegex, findAll } from "./regex.js";

const SUFFIXES = (
  "Street St Avenue Ave Road Rd Boulevard Blvd Lane Ln Drive Dr Way Court Ct Place Pl Terrace " +
  "Parkway Pkwy Highway Hwy Circle Square Sq Crescent Close"
).split(" ");
/** US states, DC and Puerto Rico, as postal abbreviations. */
const STATES = (
  "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ " +
  "NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR"
).split(" ");
const STATE = `(?:${STATES.join("|")})`;
const ZIP = "\\d{5}(?:-\\d{4})?";
const UK_POSTCODE = "[A-Z]{1,2}\\d[A-Z\\d]?[ \\t]?\\d[A-Z]{2}";
const DIRECTION = "(?:N|S|E|W|NE|NW|SE|SW)";
const BLANK = "[ \\t]+";
// Title or upper case only, like the street name: "5 Big ways" is not an address.
const SUFFIX = `(?:${SUFFIXES.flatMap((s) => [s, s.toUpperCase()]).join("|")})`;
const NAME_WORD = "(?:\\p{Lu}[\\p{L}'’\\-]*|\\d{1,3}(?:st|nd|rd|th))\\.?";
const UNIT = `(?:Apt|APT|Apartment|Suite|STE|Ste|Unit|UNIT|Floor|Fl|Room|Rm)\\.?[ \\t]*#?[A-Za-z0-9\\-]+|#[ \\t]?[A-Za-z0-9\\-]+`;

/**
 * House number (with letter or range: 221B, 12-14), optional direction,
 * one to four capitalized street-name words or an ordinal (5th), a suffix,
 * optional trailing direction (NW) and unit (Apt 4B, Suite 200, #12).
 * Or a PO box.
 */
const STREET = builtinRegex(
  `\\b(?:\\d{1,6}[A-Za-z]?(?:-\\d{1,6})?${BLANK}(?:(?:North|South|East|West|${DIRECTION})\\.?${BLANK})?` +
    `(?:${NAME_WORD}${BLANK}){1,4}${SUFFIX}\\b(?:\\.?${BLANK}${DIRECTION}\\b)?(?:\\.?,?${BLANK}(?:${UNIT}))?` +
    `|P\\.?[ \\t]?O\\.?${BLANK}Box${BLANK}\\d{1,6})\\b`,
);
/** After a separator: a state with ZIP, a ZIP, or a UK postcode. */
const POSTAL = builtinRegex(`^(?:${STATE}${BLANK}${ZIP}|${ZIP}|${UK_POSTCODE})\\b`);
/** After a comma only: a bare state ("..., NY"); after a blank, "OR"/"IN" would be words. */
const BARE_STATE = builtinRegex(`^${STATE}\\b`);
/** After a separator: a city compromise does not know, accepted only when a state or postcode follows. */
const CITY_THEN_POSTAL = builtinRegex(
  `^\\p{Lu}\\p{L}+(?:[ \\t]\\p{Lu}\\p{L}+){0,2},?${BLANK}(?:${STATE}(?:${BLANK}${ZIP})?|${ZIP}|${UK_POSTCODE})\\b`,
);
const SEPARATOR = builtinRegex("^(?:,[ \\t]*|[ \\t]+|,?[ \\t]*\\r?\\n[ \\t]*)");
/** "City, ST 12345" with no street before it; the city must be a place compromise knows. */
const STATE_ZIP = builtinRegex(`,[ \\t]*${STATE}${BLANK}${ZIP}\\b`);

/** How far past a street the city/state/ZIP may reach, and how far before ", ST 12345" a city may start. */
const TAIL = 80;
const HEAD = 60;
/**
 * compromise costs about a millisecond per call even on a short window: past
 * this many calls in one text (a list of addresses), localities are taken
 * from the patterns alone.
 */
const NLP_CALLS_PER_TEXT = 16;
const STARTS_CAPITALIZED = builtinRegex("^\\p{Lu}");

interface Budget {
  nlpCalls: number;
}

function prefixLength(re: RE2JS, text: string): number {
  const m = re.matcher(text);
  return m.lookingAt() ? m.end() : 0;
}

/** Extends a street match over ", City", ", ST 12345", "\nLondon SW1A 2AA" that follow it. */
function withLocality(text: string, street: Span, budget: Budget): Span {
  const windowEnd = Math.min(text.length, street.end + TAIL);
  // The street itself is context that helps compromise tag the city after it.
  const window = text.slice(street.start, windowEnd);
  let places: Span[] | undefined;
  let end = street.end;
  for (let step = 0; step < 4; step++) {
    const tail = text.slice(end, windowEnd);
    const sep = prefixLength(SEPARATOR, tail);
    if (sep === 0) break;
    const rest = tail.slice(sep);
    const next = end + sep;
    const afterComma = tail.slice(0, sep).includes(",");
    let taken =
      prefixLength(POSTAL, rest) ||
      prefixLength(CITY_THEN_POSTAL, rest) ||
      (afterComma ? prefixLength(BARE_STATE, rest) : 0);
    // A locality is capitalized; the next street of a list ("12 Main St, 14 Oak St") is not one.
    if (!taken && STARTS_CAPITALIZED.test(rest)) {
      if (!places && budget.nlpCalls > 0) {
        budget.nlpCalls--;
        places = phrases(window, "places").flatMap((p) => spanOf(p, street.start) ?? []);
      }
      taken = (places?.find((p) => p.start === next)?.end ?? next) - next;
    }
    if (taken <= 0) break;
    end = next + taken;
  }
  return { start: street.start, end };
}

/** "Austin, TX 78701": a place compromise recognizes right before ", ST 12345". */
function cityStateZip(text: string, hit: Span, budget: Budget): Span | undefined {
  if (budget.nlpCalls <= 0) return undefined;
  budget.nlpCalls--;
  const from = Math.max(0, hit.start - HEAD);
  const place = phrases(text.slice(from, hit.start), "places")
    .flatMap((p) => spanOf(p, from) ?? [])
    .find((p) => p.end === hit.start);
  return place ? { start: place.start, end: hit.end } : undefined;
}

/**
 * Street addresses: the STREET pattern above, extended over the locality that
 * follows it (places compromise recognizes, US state + ZIP, UK postcode, or
 * an unknown city when a state/ZIP follows it), plus "City, ST 12345" when
 * compromise knows the city. compromise only runs on the few dozen
 * characters around a pattern hit, never on the whole text.
 * Misses: addresses without a house number or suffix ("Baker Street",
 * "Unter den Linden 77"), lowercase street names, most non-US/UK formats,
 * cities compromise does not know without a state/ZIP after them.
 * A standalone place name ("Paris") is not an address.
 */
export const streetAddressDetector: Detector = {
  find(text: string): Span[] {
    const spans: Span[] = [];
    const budget: Budget = { nlpCalls: NLP_CALLS_PER_TEXT };
    for (const { start, end } of findAll(STREET, text))
      spans.push(withLocality(text, { start, end }, budget));
    for (const hit of findAll(STATE_ZIP, text)) {
      if (spans.some((s) => s.start <= hit.start && hit.end <= s.end)) continue;
      const span = cityStateZip(text, hit, budget);
      if (span) spans.push(span);
    }
    return normalizeSpans(spans);
  },
};
