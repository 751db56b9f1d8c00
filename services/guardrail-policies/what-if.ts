import type { Guardrail, GuardrailShadow } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type {
  GetGuardrailShadowResponse,
  SimulateGuardrailResponse,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { ReplayRule } from "../../governance/guardrail-replay.js";

/**
 * The guardrail what-if replay and shadow report (services/guardrail/simulate.ts, shadow.ts) that
 * a policy's are computed by, handed in by the process serving both: a service reaches no
 * sibling's code but through what its process gives it.
 */
export interface GuardrailWhatIf {
  /**
   * The shadow's report from the request log (without one: the shadow and whether it expired):
   * `live` and `proposed` are the policy as the guardrail holding its settings, now and as the
   * shadow would leave it.
   */
  report(
    live: Guardrail,
    proposed: Guardrail,
    shadow: GuardrailShadow,
    nowMs: number,
  ): Promise<GetGuardrailShadowResponse>;
  /** Absent when the process runs without the request-log database. */
  replay?: {
    simulate(
      memberOf: (keyHash: string) => Promise<string>,
      current: Guardrail,
      proposed: Guardrail,
      fromMs: number,
      toMs: number,
      ownRules: ReadonlySet<ReplayRule>,
      /** Every entity's spend, moved or not (for answers added up with others'). */
      everySpend?: boolean,
    ): Promise<SimulateGuardrailResponse>;
    /** The window asked for, defaulted and checked against the request log's retention. */
    window(
      nowMs: number,
      fromMs: number | undefined,
      toMs: number | undefined,
    ): { fromMs: number; toMs: number } | { error: string };
  };
}
