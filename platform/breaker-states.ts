import {
  type BreakerState,
  BreakerStateSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * An endpoint's circuit breaker (railgate.speech.v1.BreakerState) and its API names: "closed"
 * (serving), "open" (skipped), "half_open" (one probe in flight). The breakers keep their state
 * by these names; explain carries the enum and its JSON writes the name.
 */
export type BreakerStateName = EnumApiName<typeof BreakerState>;

export const BREAKER_STATES = enumNames<typeof BreakerState>(BreakerStateSchema);
