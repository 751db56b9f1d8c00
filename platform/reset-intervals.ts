import {
  type ResetInterval,
  ResetIntervalSchema,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * A guardrail's reset_interval (railgate.guardrail.v1.ResetInterval) and its API names
 * ("daily", "weekly", "monthly"). The same names are the calendar windows spend is counted
 * in (platform/windows.ts), which a key's limit_reset uses too (platform/key-limit-reset.ts).
 */
export type ResetIntervalName = EnumApiName<typeof ResetInterval>;

export const RESET_INTERVALS = enumNames<typeof ResetInterval>(ResetIntervalSchema);
