import {
  type GenerationStatus,
  GenerationStatusSchema,
} from "../gen/railgate/speech/v1/speech_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * How a generation ended (railgate.speech.v1.GenerationStatus) and its API names: "completed",
 * "failed", "cancelled", "refused" when it never started (a rule, a blocking filter, admission
 * or routing refused it), or "unavailable" when it never started because the store was not
 * answering (a 503, not a decision). Records carry the enum; the generation JSON, the list's
 * status filter and the request log's status column (text, so its SQL and indexes read names)
 * read and write these names through this one table.
 */
export type GenerationStatusName = EnumApiName<typeof GenerationStatus>;

export const GENERATION_STATUSES = enumNames<typeof GenerationStatus>(GenerationStatusSchema);

/**
 * The status a refused request's record is given: refused by a rule, or failed at every
 * endpoint (a store outage makes either "unavailable": refusal-record.ts).
 */
export type RefusalStatus = GenerationStatus.REFUSED | GenerationStatus.FAILED;

/** The statuses of requests that never reached a provider: no audio, no usage, no timings. */
export const NEVER_SERVED: readonly GenerationStatusName[] = ["refused", "unavailable"];
