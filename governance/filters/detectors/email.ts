import { RE2JS } from "re2js";
import type { Detector, Pretested, Span } from "./detector.js";
import { builtinRegex, findAll } from "./regex.js";

/**
 * local@domain.tld: dot-separated local atoms (letters, digits, _%+-), one or
 * more domain labels that neither start nor end with "-", and a TLD of at
 * least two letters. Letters include non-ASCII (IDN) ones. Not caught: quoted
 * local parts, IP-literal domains, "name at example dot com".
 */
const LOCAL = String.raw`[\p{L}\p{N}_%+\-]+(?:\.[\p{L}\p{N}_%+\-]+)*`;
const LABEL = String.raw`[\p{L}\p{N}](?:[\p{L}\p{N}\-]{0,61}[\p{L}\p{N}])?`;
const EMAIL = builtinRegex(`${LOCAL}@(?:${LABEL}\\.)+\\p{L}{2,63}\\b`, RE2JS.CASE_INSENSITIVE);

export const emailDetector: Detector = {
  regexes: [EMAIL],
  find(text: string, pretested?: Pretested): Span[] {
    if (!text.includes("@")) return [];
    return findAll(EMAIL, text, pretested);
  },
};
