import {
  type CheckOutcome,
  CheckOutcomeSchema,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/** What a guardrail does with a check's example request: "allowed", "refused", "redacted", "flagged". */
export type CheckOutcomeName = EnumApiName<typeof CheckOutcome>;

export const CHECK_OUTCOMES = enumNames<typeof CheckOutcome>(CheckOutcomeSchema);
