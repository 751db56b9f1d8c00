import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type Guardrail,
  GuardrailInputSchema,
  type GuardrailShadow,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import { applyUpdateMask } from "./policy/guardrail-update.js";

/**
 * The version a shadow decides by: the live guardrail as it is now with the shadow's change
 * applied (its update mask, as a PATCH applies it). Worked out again whenever the live guardrail
 * changes, so a PATCH during a shadow moves the shadow with it, and promote stores exactly this.
 */
export function shadowVersion(live: Readonly<Guardrail>, shadow: GuardrailShadow): Guardrail {
  const version = applyUpdateMask(
    live as Guardrail,
    shadow.change ?? create(GuardrailInputSchema),
    shadow.updateMask,
    // Not a write: the version keeps the live guardrail's time.
    live.updatedAt ?? timestampFromMs(0),
  );
  version.shadow = undefined;
  version.lastCheckRun = undefined;
  return version;
}
