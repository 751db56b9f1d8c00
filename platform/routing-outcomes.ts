import { type RoutingOutcome, RoutingOutcomeSchema } from "../gen/railgate/speech/v1/speech_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * What routing did with one endpoint of a request (railgate.speech.v1.RoutingOutcome) and its
 * API names: "served", "failed", "skipped", "not_tried". The generation record's routing and
 * explain's JSON (and the CLI's generation record) write these names.
 */
export type RoutingOutcomeName = EnumApiName<typeof RoutingOutcome>;

export const ROUTING_OUTCOMES = enumNames<typeof RoutingOutcome>(RoutingOutcomeSchema);
