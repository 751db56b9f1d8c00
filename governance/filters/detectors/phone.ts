import type { Detector, Pretested, Span } from "./detector.js";
import { builtinRegex, digitsOf, findAll, standsAlone } from "./regex.js";

/**
 * Four shapes; all but the bare North American one need separators or a
 * "+", so plain numbers, years, prices and IDs are left alone:
 * - North American: optional +1/1, area code (bare or in parentheses), then
 *   3-4 digits with separators: "+1 (555) 123-4567", "555-123-4567", "555.123.4567".
 * - North American, ten bare digits ("9143094996", as OpenRouter's phone
 *   preset documents), only when they form a dialable NANP number: area code
 *   and exchange each start with 2-9 and neither is an N11 service code, so
 *   "5551234567" (exchange 123), Unix times and most IDs are not phones.
 * - International: "+" country code then 2-6 digit groups, 8-15 digits in all
 *   (E.164): "+44 20 7946 0958", "+33 1 23 45 67 89", "+4915112345678".
 * - National with a trunk 0 and at least one separator, 9-11 digits:
 *   "020 7946 0958", "(030) 1234 5678", "07700 900123".
 * Not caught: 7-digit local numbers ("555-1234"), unseparated national numbers
 * outside North America ("02079460958"), vanity numbers ("1-800-FLOWERS"),
 * extensions. Caught wrongly: a bare 10-digit ID that happens to be a valid
 * NANP number.
 */
const SEP = "[ .\\-]";
const NORTH_AMERICAN = `(?:\\+?1${SEP}?)?(?:\\(\\d{3}\\)${SEP}?|\\d{3}${SEP})\\d{3}${SEP}\\d{4}`;
const INTERNATIONAL = `\\+[1-9]\\d{0,2}(?:${SEP}?(?:\\(\\d{1,4}\\)|\\d{1,5})){1,6}`;
const NATIONAL = `(?:\\(0\\d{1,4}\\)${SEP}?|0\\d{1,4}${SEP})\\d{3,4}${SEP}?\\d{3,4}`;
const BARE_NANP = "[2-9]\\d{2}[2-9]\\d{6}";
const PHONE = builtinRegex(
  `(?:${NORTH_AMERICAN})|(?:${INTERNATIONAL})|(?:${NATIONAL})|(?:${BARE_NANP})`,
);

/** Ten digits NXX NXX XXXX whose area code and exchange are not N11 service codes (911, 411 ...). */
function dialableNanp(digits: string): boolean {
  return digits.length === 10 && digits.slice(1, 3) !== "11" && digits.slice(4, 6) !== "11";
}

function plausible(match: string): boolean {
  const digits = digitsOf(match).length;
  if (/^\d+$/.test(match)) return dialableNanp(match);
  if (match.startsWith("+")) return digits >= 8 && digits <= 15;
  if (match.startsWith("0") || match.startsWith("(0")) return digits >= 9 && digits <= 11;
  return digits === 10 || digits === 11;
}

export const phoneDetector: Detector = {
  regexes: [PHONE],
  find(text: string, pretested?: Pretested): Span[] {
    const spans: Span[] = [];
    for (const { start, end } of findAll(PHONE, text, pretested)) {
      // A match may start at "(" or "+": look for neighbours around the whole thing.
      if (plausible(text.slice(start, end)) && standsAlone(text, start, end))
        spans.push({ start, end });
    }
    return spans;
  },
};
