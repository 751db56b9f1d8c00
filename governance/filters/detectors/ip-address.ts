import { RE2JS } from "re2js";
import { type Detector, normalizeSpans, type Pretested, type Span } from "./detector.js";
import { builtinRegex, findAll } from "./regex.js";

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`;
const H = "[0-9a-f]{1,4}";

/** Every RFC 4291 text form: full, "::"-compressed, and with a trailing IPv4. */
const IPV6 = [
  `(?:${H}:){7}${H}`,
  `(?:${H}:){1,7}:`,
  `(?:${H}:){1,6}:${H}`,
  `(?:${H}:){1,5}(?::${H}){1,2}`,
  `(?:${H}:){1,4}(?::${H}){1,3}`,
  `(?:${H}:){1,3}(?::${H}){1,4}`,
  `(?:${H}:){1,2}(?::${H}){1,5}`,
  `${H}:(?::${H}){1,6}`,
  `:(?::${H}){1,7}`,
  `(?:${H}:){6}${IPV4}`,
  `(?:${H}:){1,5}:${IPV4}`,
  `::(?:ffff(?::0{1,4})?:)?${IPV4}`,
].join("|");

const V4 = builtinRegex(`\\b${IPV4}\\b`);
// Leftmost-longest: with first-match alternation "2001:db8::1" would stop at "2001:db8::".
const V6 = builtinRegex(`(?:${IPV6})`, RE2JS.CASE_INSENSITIVE | RE2JS.LONGEST_MATCH);

const isWordChar = (c: string | undefined) => c !== undefined && /^[\p{L}\p{N}_]$/u.test(c);
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-f]$/i.test(c);

/** Not a piece of a longer dotted number (version strings, "1.2.3.4.5"). */
function v4StandsAlone(text: string, start: number, end: number): boolean {
  const before = text[start - 1];
  const after = text[end];
  if (before === "." && /\d/.test(text[start - 2] ?? "")) return false;
  if (after === "." && /\d/.test(text[end + 1] ?? "")) return false;
  return !isWordChar(before) && !isWordChar(after);
}

/** Not a piece of a longer colon-separated token ("std::", 9 groups, "a::b::c"). */
function v6StandsAlone(text: string, start: number, end: number): boolean {
  const before = text[start - 1];
  const after = text[end];
  if (isWordChar(before) || isWordChar(after)) return false;
  if (before === ":" && (isHex(text[start - 2]) || text[start - 2] === ":")) return false;
  if (after === ":" && (isHex(text[end + 1]) || text[end + 1] === ":")) return false;
  return true;
}

/**
 * IPv4 dotted quads with every octet 0-255, and IPv6 in full, compressed
 * ("2001:db8::1", "::1", "fe80::") and IPv4-suffixed ("::ffff:192.0.2.1")
 * forms. Not caught: IPv4 with leading-zero octets ("010.1.1.1"), zone ids
 * ("%eth0", left outside the match), CIDR suffixes (left outside), bare "::".
 * Hex-only words joined by "::" ("cafe::beef") are valid IPv6 and are caught.
 */
export const ipAddressDetector: Detector = {
  regexes: [V4, V6],
  find(text: string, pretested?: Pretested): Span[] {
    const spans: Span[] = [];
    if (text.includes(".")) {
      for (const { start, end } of findAll(V4, text, pretested)) {
        if (v4StandsAlone(text, start, end)) spans.push({ start, end });
      }
    }
    if (text.includes(":")) {
      for (const { start, end } of findAll(V6, text, pretested)) {
        if (v6StandsAlone(text, start, end)) spans.push({ start, end });
      }
    }
    // An IPv4-suffixed IPv6 address is found by both: one address, one span.
    return normalizeSpans(spans);
  },
};
