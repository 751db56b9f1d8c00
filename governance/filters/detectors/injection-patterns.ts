/**
 * The prompt-injection phrasings, each with the name a block reports in
 * `error.metadata.patterns`. The first group is OpenRouter's documented list
 * (guides/features/guardrails/prompt-injection), same names, same regular
 * expressions written in RE2 syntax; the second group keeps the phrasings
 * Railgate caught before (broader wording of the same families). Matching
 * ignores case except where a pattern says otherwise, and `\s` means
 * JavaScript's whitespace (see withJsWhitespace).
 */
export interface InjectionPattern {
  name: string;
  regex: string;
  /** Matched exactly as written (only DAN, which is otherwise a name). */
  caseSensitive?: boolean;
}

const TARGETS = "(?:instructions?|rules?|guidelines?|constraints?|directives?)";
const POSSESSIVE = "(?:your?|yoru|yuor|the|my|its|his|her|our|their)";
const SYSTEM = "(?:system|systme|sysetm|systemp?)";

export const DOCUMENTED_PATTERNS: readonly InjectionPattern[] = [
  // Direct instruction override
  {
    name: "ignore_previous_instructions",
    regex: `ignore\\s+(?:all\\s+)?(?:previous|prior)\\s+(?:(?:safety|security|system|operational|internal|core|original|initial|existing|given|stated|provided|defined|specified|established)\\s+)?${TARGETS}`,
  },
  {
    name: "disregard_instructions",
    regex: `disregard\\s+(?:all\\s+)?(?:previous|prior|above)\\s+${TARGETS}`,
  },
  {
    name: "forget_instructions",
    regex: `forget\\s+(?:all\\s+)?(?:previous|prior|above)\\s+${TARGETS}`,
  },
  { name: "new_instructions", regex: "new\\s+instructions?:" },
  {
    name: "do_not_follow",
    regex: "do\\s+not\\s+follow\\s+(?:the\\s+)?(?:system|developer|previous|original)",
  },
  {
    name: "supersede_instructions",
    regex: `supersedes?\\s+(?:all\\s+)?(?:prior|previous)\\s+${TARGETS}`,
  },
  {
    name: "void_instructions",
    regex:
      "(?:all\\s+)?(?:previous|prior)\\s+instructions?\\s+(?:are|is)\\s+(?:void|invalid|null|obsolete|cancelled|revoked)",
  },
  // Developer / admin mode activation
  { name: "developer_mode", regex: "you\\s+are\\s+now\\s+(?:in\\s+)?developer\\s+mode" },
  { name: "enter_special_mode", regex: "enter\\s+(?:developer|admin|debug|maintenance)\\s+mode" },
  {
    name: "activate_special_mode",
    regex: "activate\\s+(?:developer|admin|debug|jailbreak)\\s+mode",
  },
  // System override
  { name: "system_override", regex: "\\bsystem\\s+override\\b" },
  { name: "override_instructions", regex: `override\\s+(?:your\\s+)?${TARGETS}` },
  // Prompt extraction
  {
    name: "reveal_prompt",
    regex: `reveal\\s+(?:${POSSESSIVE}\\s+)?(?:(?:full|hidden|complete|internal|secret|original|entire|exact|actual|real)\\s+){0,2}(?:${SYSTEM}\\s+)?prompt\\b`,
  },
  { name: "show_prompt", regex: `show\\s+(?:me\\s+)?${POSSESSIVE}\\s+(?:${SYSTEM}\\s+)?prompt\\b` },
  {
    name: "what_instructions",
    regex: "what\\s+(?:are|were)\\s+(?:your\\s+)?(?:exact\\s+)?instructions",
  },
  {
    name: "repeat_instructions",
    regex: "repeat\\s+(?:the\\s+)?(?:text|instructions?)\\s+(?:above|before)",
  },
  {
    name: "output_prompt",
    regex: "output\\s+(?:your\\s+)?(?:initial|original|system)\\s+(?:prompt|instructions?)",
  },
  // Role manipulation
  {
    name: "remove_restrictions",
    regex: "you\\s+are\\s+no\\s+longer\\s+(?:bound|restricted|limited)",
  },
  { name: "act_unbound", regex: "act\\s+as\\s+if\\s+(?:you(?:'re|\\s+are)\\s+)?not\\s+bound" },
  {
    name: "pretend_different",
    regex: "pretend\\s+(?:you(?:'re|\\s+are)\\s+)?(?:a\\s+)?different\\s+(?:ai|assistant|model)",
  },
  {
    name: "identity_hijack",
    regex:
      "you\\s+are\\s+now\\s+(?:(?:a|an)\\s+)?\\w+.{0,40}(?:without\\s+(?:any\\s+)?restrict|ignor\\w*\\s+(?:all|any|every|prev)|bypass|unrestrict|unlimit|obey\\s+only|no\\s+(?:rules|limits|restrict|boundari))",
  },
  // DAN-style jailbreaks
  {
    name: "dan_jailbreak",
    regex: "\\bDAN\\b.*\\b(?i:do\\s+anything\\s+now)\\b",
    caseSensitive: true,
  },
  { name: "jailbreak_mode", regex: "jailbreak(?:ed)?\\s+(?:mode|prompt)" },
  // Safety bypass
  {
    name: "bypass_safety",
    regex:
      "bypass\\s+(?:your\\s+)?(?:safety|security|content|ethical)\\s+(?:filters?|measures?|guidelines?|restrictions?)",
  },
  {
    name: "disable_safety",
    regex: "disable\\s+(?:your\\s+)?(?:safety|security|content)\\s+(?:filters?|measures?)",
  },
  {
    name: "ignore_safety",
    regex:
      "(?:ignore|disregard)\\s+(?:all\\s+)?(?:your\\s+)?(?:safety|security|ethical|content)\\s+(?:guidelines?|rules?|restrictions?|measures?|filters?|polic(?:y|ies)|protocols?)",
  },
  // Tag injection and role spoofing
  { name: "system_tag_injection", regex: "<\\s*/?\\s*system\\s*/?>" },
  { name: "role_tag_injection", regex: "<\\s*/?\\s*(?:assistant|developer|tool|function)\\s*/?>" },
  { name: "role_delimiter_injection", regex: "\\]\\s*\\n\\s*\\[?(?:system|assistant|user)\\]?:" },
  {
    name: "bracketed_role_spoofing",
    regex: "\\[\\s*(?:System\\s*Message|System|Assistant|Internal)\\s*\\]",
  },
  // Lines starting with "System:" (multi-line: at the start of any line).
  { name: "system_prefix_spoofing", regex: "(?m:^)\\s*System:\\s+" },
  // Control tokens
  {
    name: "control_token_injection",
    regex: "<\\|(?:im_start|im_end|eot_id|start_header_id|end_header_id|endoftext)\\|>",
  },
  {
    name: "deepseek_control_token_injection",
    regex:
      "<\\x{FF5C}(?:end\\x{2581}of\\x{2581}sentence|begin\\x{2581}of\\x{2581}sentence)\\x{FF5C}>",
  },
];

const S = "\\s+";
const EARLIER = "(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system)";
const ORDERS =
  "(?:instructions?|prompts?|directions?|directives?|rules|guidelines|messages?|commands?|context)";
const QUALIFIERS = "(?:(?:all|any|the|your|my|these|those|of)\\s+)*";
const LIMITS =
  "(?:restrictions|limitations|limits|filters|rules|guidelines|censorship|boundaries|guardrails)";
const SECRET_PROMPT =
  "(?:(?:full|entire|original|initial|hidden|secret)\\s+)*(?:system|initial|original|hidden|secret)\\s+(?:prompt|message|instructions)";

/** Railgate's broader phrasings, each a whole-word match. */
export const RAILGATE_PATTERNS: readonly InjectionPattern[] = [
  // "ignore (all) previous instructions", "ignore the above prompt"
  { name: "ignore_earlier_orders", regex: `ignore${S}${QUALIFIERS}${EARLIER}${S}${ORDERS}` },
  // "disregard the system prompt", "disregard your rules"
  {
    name: "disregard_earlier_orders",
    regex: `disregard${S}${QUALIFIERS}(?:${EARLIER}${S})?${ORDERS}`,
  },
  // "forget everything you were told", "forget all previous instructions"
  {
    name: "forget_earlier_orders",
    regex: `forget${S}(?:(?:all|everything|any|the|your)\\s+)*(?:${EARLIER}${S})?(?:${ORDERS}|you${S}(?:were|have${S}been)${S}told)`,
  },
  // "override your instructions", "override the safety guidelines"
  {
    name: "override_earlier_orders",
    regex: `override${S}(?:(?:your|the|all|any)\\s+)+(?:${EARLIER}${S}|safety${S})?${ORDERS}`,
  },
  // "you are now DAN", "you're now in developer mode", "you are now an unrestricted AI"
  {
    name: "unrestricted_identity",
    regex: `you(?:${S}are|'re|’re)${S}now${S}(?:dan\\b|jailbroken|unrestricted|unfiltered|uncensored|free${S}(?:from|of)|in${S}developer${S}mode|an?${S}(?:unrestricted|unfiltered|uncensored))`,
  },
  { name: "do_anything_now", regex: `do${S}anything${S}now` },
  { name: "dan_mode", regex: `dan${S}mode` },
  // "reveal your system prompt", "print the hidden instructions", "tell me your initial prompt"
  {
    name: "secret_prompt_extraction",
    regex: `(?:reveal|show|print|display|output|repeat|leak|dump|tell${S}me|what${S}(?:is|are))${S}(?:me${S})?(?:your|the)${S}${SECRET_PROMPT}`,
  },
  // "act as an AI without any restrictions", "pretend you are a model with no filters"
  {
    name: "act_without_limits",
    regex: `(?:act${S}as|pretend${S}(?:to${S}be|you${S}are|you're))${S}(?:\\S+\\s+){0,8}?(?:without|with${S}no|free${S}of)${S}(?:any${S})?${LIMITS}`,
  },
  // "bypass your safety filters", "circumvent the guardrails"
  {
    name: "bypass_limits",
    regex: `(?:bypass|circumvent|evade)${S}(?:(?:your|the|all|any|its)\\s+)+(?:safety${S}|content${S})?${LIMITS}`,
  },
  { name: "jailbreak_keyword", regex: "jailbr(?:eak(?:s|ing|ed)?|oken)" },
  { name: "developer_mode_keyword", regex: `developer${S}mode` },
].map((p) => ({ name: p.name, regex: `\\b(?:${p.regex})\\b` }));

export const INJECTION_PATTERNS: readonly InjectionPattern[] = [
  ...DOCUMENTED_PATTERNS,
  ...RAILGATE_PATTERNS,
];

/**
 * Words an injection hidden in Base64 or hex is recognized by once decoded
 * (OpenRouter's documented evasion keywords).
 */
export const ENCODED_KEYWORDS: readonly string[] = [
  "ignore",
  "bypass",
  "override",
  "reveal",
  "system",
  "prompt",
];

/** Keywords recognized when spelled out letter by letter ("i g n o r e"): the same list. */
export const SPACED_KEYWORDS = ENCODED_KEYWORDS;

/**
 * Words whose scrambled spellings ("ignroe", "insturctions") are read as the
 * word: OpenRouter's typoglycemia targets, and the other words the patterns
 * above need, so "ignroe all prevoius insturctions" reads as the phrase.
 */
export const SCRAMBLE_TARGETS: readonly string[] = [
  "ignore",
  "bypass",
  "override",
  "reveal",
  "delete",
  "system",
  "prompt",
  "instructions",
  "instruction",
  "previous",
  "prior",
  "disregard",
  "forget",
  "rules",
  "guidelines",
  "constraints",
  "directives",
  "safety",
  "security",
  "restrictions",
  "filters",
  "developer",
  "jailbreak",
  "disable",
  "supersede",
  "pretend",
  "anything",
];
