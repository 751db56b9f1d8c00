import {
  type GuardrailSource,
  GuardrailSourceSchema,
} from "../gen/railgate/speech/v1/speech_service_pb.js";
import { type EnumApiName, enumNames } from "./enum-names.js";

/**
 * How a guardrail governs a key (railgate.speech.v1.GuardrailSource) and its API names: "key",
 * "member", "workspace_default". The policy keeps each governing guardrail's source by name
 * (governance/policy/types.ts); explain carries the enum and its JSON writes the name.
 */
export type GuardrailSourceName = EnumApiName<typeof GuardrailSource>;

export const GUARDRAIL_SOURCES = enumNames<typeof GuardrailSource>(GuardrailSourceSchema);
