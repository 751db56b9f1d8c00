import { creditCardDetector } from "./credit-card.js";
import type { Detector } from "./detector.js";
import { emailDetector } from "./email.js";
import { ipAddressDetector } from "./ip-address.js";
import { personNameDetector } from "./person-name.js";
import { phoneDetector } from "./phone.js";
import { promptInjectionDetector } from "./prompt-injection.js";
import { ssnDetector } from "./ssn.js";
import { streetAddressDetector } from "./street-address.js";

export interface BuiltinFilter {
  /** The fixed label the filter redacts with and reports; labels sent with a rule are ignored. */
  label: string;
  /**
   * What a block message names ("Request blocked by content filter: Email
   * address"): OpenRouter's preset names for the regex presets, and the
   * entity type for the two it detects with NLP ("Blocked PII detected:
   * PERSON"), as its sensitive-info guide documents.
   */
  name: string;
  detector: Detector;
}

/** One entry per builtin slug; adding a builtin touches its own file and this map. */
export const BUILTIN_FILTERS: ReadonlyMap<string, BuiltinFilter> = new Map([
  ["email", { label: "[EMAIL]", name: "Email address", detector: emailDetector }],
  ["phone", { label: "[PHONE]", name: "Phone number", detector: phoneDetector }],
  ["ssn", { label: "[SSN]", name: "Social Security number", detector: ssnDetector }],
  [
    "credit-card",
    { label: "[CREDIT_CARD]", name: "Credit card number", detector: creditCardDetector },
  ],
  ["ip-address", { label: "[IP_ADDRESS]", name: "IP address", detector: ipAddressDetector }],
  [
    "person-name",
    {
      label: "[PERSON_NAME]",
      name: "Blocked PII detected: PERSON",
      detector: personNameDetector,
    },
  ],
  [
    "address",
    { label: "[ADDRESS]", name: "Blocked PII detected: LOCATION", detector: streetAddressDetector },
  ],
  [
    "regex-prompt-injection",
    { label: "[PROMPT_INJECTION]", name: "Prompt injection", detector: promptInjectionDetector },
  ],
]);

/** The only builtin whose rules may scan user text alone. */
export const SCOPED_BUILTIN = "regex-prompt-injection";
