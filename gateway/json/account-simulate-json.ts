import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { AccountPolicyInput } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { type JsonSchema, specSchema } from "../openapi/spec-schema.js";
import { badRequest, checkFields } from "./fields.js";
import {
  accountPolicyInputFromJson,
  UPDATE_ACCOUNT_POLICY_BODY_SCHEMA,
} from "./guardrail-policy-json.js";
import { instant, SIMULATE_BODY } from "./policy-shadow-json.js";

export const ACCOUNT_SIMULATE_BODY_SCHEMA: JsonSchema = specSchema(SIMULATE_BODY, {
  required: ["change"],
  refine: { change: UPDATE_ACCOUNT_POLICY_BODY_SCHEMA },
});

/** A workspace-wide policy's simulate body: the change (its PUT body) and the window replayed. */
export function accountSimulateRequestFromJson(body: Record<string, unknown>): {
  change: AccountPolicyInput;
  from?: Timestamp;
  to?: Timestamp;
} {
  checkFields(body, SIMULATE_BODY);
  if (body.change === undefined) throw badRequest("change is required (the body a PUT takes)");
  const change = accountPolicyInputFromJson(body.change as Record<string, unknown>, "update");
  return { change, from: instant(body, "from"), to: instant(body, "to") };
}
