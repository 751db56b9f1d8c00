/** Builtin content filters and the fixed label each one redacts with. */
export const BUILTIN_FILTER_LABELS: Readonly<Record<string, string>> = {
  email: "[EMAIL]",
  phone: "[PHONE]",
  ssn: "[SSN]",
  "credit-card": "[CREDIT_CARD]",
  "ip-address": "[IP_ADDRESS]",
  "person-name": "[PERSON_NAME]",
  address: "[ADDRESS]",
  "regex-prompt-injection": "[PROMPT_INJECTION]",
};

/** Only this builtin knows which messages it scans. */
export const SCOPED_BUILTIN = "regex-prompt-injection";

export const DEFAULT_REDACT_LABEL = "[REDACTED]";
export const DEFAULT_BLOCK_LABEL = "[BLOCKED]";

export function isBuiltinSlug(slug: string): boolean {
  return Object.hasOwn(BUILTIN_FILTER_LABELS, slug);
}
