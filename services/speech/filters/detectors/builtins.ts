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
  detector: Detector;
}

/** One entry per builtin slug; adding a builtin touches its own file and this map. */
export const BUILTIN_FILTERS: ReadonlyMap<string, BuiltinFilter> = new Map([
  ["email", { label: "[EMAIL]", detector: emailDetector }],
  ["phone", { label: "[PHONE]", detector: phoneDetector }],
  ["ssn", { label: "[SSN]", detector: ssnDetector }],
  ["credit-card", { label: "[CREDIT_CARD]", detector: creditCardDetector }],
  ["ip-address", { label: "[IP_ADDRESS]", detector: ipAddressDetector }],
  ["person-name", { label: "[PERSON_NAME]", detector: personNameDetector }],
  ["address", { label: "[ADDRESS]", detector: streetAddressDetector }],
  ["regex-prompt-injection", { label: "[PROMPT_INJECTION]", detector: promptInjectionDetector }],
]);

/** The only builtin whose rules may scan user text alone. */
export const SCOPED_BUILTIN = "regex-prompt-injection";
