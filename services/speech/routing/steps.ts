import { create } from "@bufbuild/protobuf";
import {
  RoutingOutcome,
  type RoutingStep,
  RoutingStepSchema,
} from "../../../gen/railgate/speech/v1/speech_pb.js";

/** An endpoint routing left out, and why. */
export interface Exclusion {
  provider: string;
  reason: string;
}

export function skippedStep(x: Exclusion): RoutingStep {
  return create(RoutingStepSchema, {
    provider: x.provider,
    outcome: RoutingOutcome.SKIPPED,
    reason: x.reason,
  });
}

/**
 * The routing of a request that produced no audio, kept with its error (a 404 of routing, the
 * last endpoint's failure) so the refusal record tells which endpoints were tried and why.
 */
const attached = new WeakMap<object, RoutingStep[]>();

export function withRouting<E>(err: E, steps: RoutingStep[]): E {
  if (typeof err === "object" && err !== null) attached.set(err, steps);
  return err;
}

export function routingOf(err: unknown): RoutingStep[] {
  return (typeof err === "object" && err !== null && attached.get(err)) || [];
}
