/**
 * The builtin content filters: their slugs, the fixed label each redacts
 * with, and the name a block message gives. The one table both the guardrail
 * service (which validates and stores rules), the filter engine (which
 * runs them, see governance/filters/detectors/builtins.ts) and the gateway's
 * API document read, so it lives below all three. It holds no detectors, so
 * validating a guardrail does not load the name and address gazetteers.
 */
export const BUILTIN_TABLE = {
  email: { label: "[EMAIL]", name: "Email address" },
  phone: { label: "[PHONE]", name: "Phone number" },
  ssn: { label: "[SSN]", name: "Social Security number" },
  "credit-card": { label: "[CREDIT_CARD]", name: "Credit card number" },
  "ip-address": { label: "[IP_ADDRESS]", name: "IP address" },
  // What a block message names ("Request blocked by content filter: Email
  // address"): OpenRouter's preset names for the regex presets, and the entity
  // type for the two it detects with NLP ("Blocked PII detected: PERSON"), as
  // its sensitive-info guide documents.
  "person-name": { label: "[PERSON_NAME]", name: "Blocked PII detected: PERSON" },
  address: { label: "[ADDRESS]", name: "Blocked PII detected: LOCATION" },
  "regex-prompt-injection": { label: "[PROMPT_INJECTION]", name: "Prompt injection" },
} as const satisfies Record<string, BuiltinEntry>;

export interface BuiltinEntry {
  /** The fixed label the filter redacts with and reports; labels sent with a rule are ignored. */
  readonly label: string;
  /** What a block message names. */
  readonly name: string;
}

export type BuiltinSlug = keyof typeof BUILTIN_TABLE;

/** Every builtin slug, in the order the API documents them. */
export const BUILTIN_SLUGS = Object.keys(BUILTIN_TABLE) as readonly BuiltinSlug[];

export function isBuiltinSlug(slug: string): slug is BuiltinSlug {
  return Object.hasOwn(BUILTIN_TABLE, slug);
}

/** The builtin `slug` names, or undefined when it names none. */
export function builtinEntry(slug: string): BuiltinEntry | undefined {
  return isBuiltinSlug(slug) ? BUILTIN_TABLE[slug] : undefined;
}

/** The only builtin whose rules may scan user text alone. */
export const SCOPED_BUILTIN = "regex-prompt-injection" satisfies BuiltinSlug;

/** Labels of a custom filter saved without one. */
export const DEFAULT_REDACT_LABEL = "[REDACTED]";
export const DEFAULT_BLOCK_LABEL = "[BLOCKED]";
