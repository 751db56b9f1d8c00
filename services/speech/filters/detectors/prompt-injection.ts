import { RE2JS } from "re2js";
import type { Detector, Span } from "./detector.js";
import { builtinRegex, findAll } from "./regex.js";

const S = "\\s+";
const ANY_WORDS = "(?:\\S+\\s+){0,8}?";
const EARLIER = "(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)";
const ORDERS =
  "(?:instructions?|prompts?|directions?|directives?|rules|guidelines|messages?|commands?|context)";
const QUALIFIERS = "(?:(?:all|any|the|your|my|these|those|of)\\s+)*";
const LIMITS =
  "(?:restrictions|limitations|limits|filters|rules|guidelines|censorship|boundaries|guardrails)";
const SECRET_PROMPT =
  "(?:(?:full|entire|original|initial|hidden|secret)\\s+)*(?:system|initial|original|hidden|secret)\\s+(?:prompt|message|instructions)";

/**
 * Well-known injection phrasings, one alternation so a text is scanned once.
 * Words may be separated by any whitespace; matching ignores case.
 */
const PHRASINGS = [
  // "ignore (all) previous instructions", "ignore the above prompt"
  `ignore${S}${QUALIFIERS}${EARLIER}${S}${ORDERS}`,
  // "disregard the system prompt", "disregard all prior instructions", "disregard your rules"
  `disregard${S}${QUALIFIERS}(?:${EARLIER}${S})?${ORDERS}`,
  // "forget everything you were told", "forget all previous instructions"
  `forget${S}(?:(?:all|everything|any|the|your)\\s+)*(?:${EARLIER}${S})?(?:${ORDERS}|you${S}(?:were|have${S}been)${S}told)`,
  // "override your instructions", "override the safety guidelines"
  `override${S}(?:(?:your|the|all|any)\\s+)+(?:${EARLIER}${S}|safety${S})?${ORDERS}`,
  // "you are now DAN", "you're now in developer mode", "you are now an unrestricted AI"
  `you(?:${S}are|'re|’re)${S}now${S}(?:dan\\b|jailbroken|unrestricted|unfiltered|uncensored|free${S}(?:from|of)|in${S}developer${S}mode|an?${S}(?:unrestricted|unfiltered|uncensored))`,
  `do${S}anything${S}now`,
  `\\bdan${S}mode\\b`,
  // "reveal your system prompt", "print the hidden instructions", "tell me your initial prompt"
  `(?:reveal|show|print|display|output|repeat|leak|dump|tell${S}me|what${S}(?:is|are))${S}(?:me${S})?(?:your|the)${S}${SECRET_PROMPT}`,
  // "act as an AI without any restrictions", "pretend you are a model with no filters"
  `(?:act${S}as|pretend${S}(?:to${S}be|you${S}are|you're))${S}${ANY_WORDS}(?:without|with${S}no|free${S}of)${S}(?:any${S})?${LIMITS}`,
  // "bypass your safety filters", "ignore your guardrails"
  `(?:bypass|circumvent|evade)${S}(?:(?:your|the|all|any|its)\\s+)+(?:safety${S}|content${S})?${LIMITS}`,
  `jailbr(?:eak(?:s|ing|ed)?|oken)`,
  `developer${S}mode`,
];
const INJECTION = builtinRegex(`\\b(?:${PHRASINGS.join("|")})\\b`, RE2JS.CASE_INSENSITIVE);

/**
 * Catches the phrasings above in any case and spacing. Misses paraphrases
 * ("pay no attention to what you were told before"), other languages,
 * obfuscation (l33t, zero-width characters, base64) and injections split
 * across parts: a pattern list is a tripwire, not a classifier.
 */
export const promptInjectionDetector: Detector = {
  find(text: string): Span[] {
    return findAll(INJECTION, text);
  },
};
