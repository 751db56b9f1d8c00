import type { Detector, Pretested, Span } from "./detector.js";
import {
  base64Injections,
  collapsedSpacing,
  hexInjections,
  type Rewritten,
  spacedKeywords,
  unscrambled,
} from "./injection-evasion.js";
import { INJECTION_PATTERNS, type InjectionPattern } from "./injection-patterns.js";
import { JS_SPACE_CLASS } from "./js-whitespace.js";
import { builtinRegex, findAll } from "./regex.js";

/** Names reported for matches found only once an evasion was undone. */
export const EVASION_NAMES = {
  typoglycemia: "typoglycemia_evasion",
  spacing: "character_spacing_evasion",
  base64: "base64_encoded_injection",
  hex: "hex_encoded_injection",
} as const;

/**
 * A pattern's RE2 source: `\s` widened to JavaScript's whitespace, so a
 * no-break space between the words evades nothing. (`\S` keeps RE2's
 * meaning: its JavaScript complement is a long list of ranges that triples
 * the cost of scanning clean text, and only the word-skipping of one
 * phrasing uses it.)
 */
function source(p: InjectionPattern): string {
  const re = p.regex.replaceAll("\\s", JS_SPACE_CLASS);
  return p.caseSensitive ? re : `(?i:${re})`;
}

/** Every pattern in one alternation, so a text is scanned once (and a clean one by a DFA). */
const INJECTION = builtinRegex(INJECTION_PATTERNS.map((p) => `(?:${source(p)})`).join("|"));
/** Each pattern alone, to name a match: tried in order on the matched text only. */
const NAMED = INJECTION_PATTERNS.map((p) => ({ name: p.name, re: builtinRegex(source(p)) }));

function nameOf(matched: string): string {
  return NAMED.find((p) => p.re.test(matched))?.name ?? "prompt_injection";
}

/** Matches in a rewritten text, mapped back to the original and named for the evasion. */
function rewrittenMatches(rewritten: Rewritten, name: string): Span[] {
  const origin = rewritten.origin;
  return findAll(INJECTION, rewritten.text).map((s) =>
    origin
      ? { start: origin[s.start] as number, end: (origin[s.end - 1] as number) + 1, name }
      : { start: s.start, end: s.end, name },
  );
}

/** Sorted, without overlaps: a span overlapping an earlier one extends it and keeps its name. */
function merged(spans: Span[]): Span[] {
  const sorted = spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/**
 * OpenRouter's documented prompt-injection patterns (and Railgate's broader
 * phrasings of the same families), in any case and spacing, plus the
 * evasions OpenRouter undoes: shuffled inner letters ("ignroe all prevoius
 * insturctions"), letters spaced apart ("i g n o r e  p r e v i o u s"), and
 * injections hidden in Base64 or hex. Each span is named for the pattern, or
 * the evasion, that found it. Misses paraphrases ("pay no attention to what
 * you were told before"), other languages, l33t and homoglyphs, and
 * injections split across parts: a pattern list is a tripwire, not a
 * classifier.
 */
export const promptInjectionDetector: Detector = {
  regexes: [INJECTION],
  find(text: string, pretested?: Pretested): Span[] {
    const spans: Span[] = findAll(INJECTION, text, pretested).map((s) => ({
      ...s,
      name: nameOf(text.slice(s.start, s.end)),
    }));
    const scrambled = unscrambled(text);
    if (scrambled) spans.push(...rewrittenMatches(scrambled, EVASION_NAMES.typoglycemia));
    const spaced = collapsedSpacing(text);
    if (spaced) {
      spans.push(...rewrittenMatches(spaced, EVASION_NAMES.spacing));
      for (const s of spacedKeywords(spaced)) spans.push({ ...s, name: EVASION_NAMES.spacing });
    }
    for (const s of base64Injections(text)) spans.push({ ...s, name: EVASION_NAMES.base64 });
    for (const s of hexInjections(text)) spans.push({ ...s, name: EVASION_NAMES.hex });
    return spans.length === 0 ? spans : merged(spans);
  },
};
