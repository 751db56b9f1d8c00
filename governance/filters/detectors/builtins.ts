import {
  BUILTIN_SLUGS,
  BUILTIN_TABLE,
  type BuiltinEntry,
  type BuiltinSlug,
} from "../../../domain/builtin-filters.js";
import { creditCardDetector } from "./credit-card.js";
import type { Detector } from "./detector.js";
import { emailDetector } from "./email.js";
import { ipAddressDetector } from "./ip-address.js";
import { personNameDetector } from "./person-name.js";
import { phoneDetector } from "./phone.js";
import { promptInjectionDetector } from "./prompt-injection.js";
import { ssnDetector } from "./ssn.js";
import { streetAddressDetector } from "./street-address.js";

export interface BuiltinFilter extends BuiltinEntry {
  detector: Detector;
  /** Estimated microseconds to scan one character (see CompiledFilters.microsPerChar). */
  microsPerChar: number;
}

/**
 * Cost of scanning one character, in microseconds, measured with
 * bench/filters.ts: a regex builtin about a third. The person-name and
 * address gazetteers are priced at their cost on text dense with names and
 * addresses (bench/detector-quality.ts: about 1.3 and 0.25), most text costs
 * a tenth of that.
 */
const REGEX_MICROS_PER_CHAR = 0.35;

/** Keyed by the slug table: a builtin added there without a detector here does not compile. */
const DETECTORS: Record<BuiltinSlug, Omit<BuiltinFilter, keyof BuiltinEntry>> = {
  email: { detector: emailDetector, microsPerChar: REGEX_MICROS_PER_CHAR },
  phone: { detector: phoneDetector, microsPerChar: REGEX_MICROS_PER_CHAR },
  ssn: { detector: ssnDetector, microsPerChar: REGEX_MICROS_PER_CHAR },
  "credit-card": { detector: creditCardDetector, microsPerChar: REGEX_MICROS_PER_CHAR },
  "ip-address": { detector: ipAddressDetector, microsPerChar: REGEX_MICROS_PER_CHAR },
  "person-name": { detector: personNameDetector, microsPerChar: 1.5 },
  address: { detector: streetAddressDetector, microsPerChar: 0.3 },
  "regex-prompt-injection": {
    detector: promptInjectionDetector,
    microsPerChar: REGEX_MICROS_PER_CHAR,
  },
};

/** Each builtin's entry in the slug table with the detector that runs it. */
export const BUILTIN_FILTERS: ReadonlyMap<string, BuiltinFilter> = new Map(
  BUILTIN_SLUGS.map((slug) => [slug, { ...BUILTIN_TABLE[slug], ...DETECTORS[slug] }]),
);
