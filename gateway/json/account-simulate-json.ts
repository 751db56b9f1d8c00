import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import {
  type AccountPolicyInput,
  type GetAccountPolicyShadowResponse,
  GetAccountPolicyShadowResponseSchema,
  type StartAccountPolicyShadowResponse,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { type JsonSchema, STRINGS, shapeOf, specSchema } from "../openapi/spec-schema.js";
import { badRequest, checkFields } from "./fields.js";
import {
  accountPolicyInputFromJson,
  UPDATE_ACCOUNT_POLICY_BODY_SCHEMA,
} from "./guardrail-policy-json.js";
import { instant, SHADOW_BODY, SIMULATE_BODY } from "./policy-shadow-json.js";
import {
  SHADOW_JSON_SCHEMA,
  type ShadowJson,
  shadowExpiresAt,
  shadowReportToJson,
} from "./shadow-json.js";

export const ACCOUNT_SIMULATE_BODY_SCHEMA: JsonSchema = specSchema(SIMULATE_BODY, {
  required: ["change"],
  refine: { change: UPDATE_ACCOUNT_POLICY_BODY_SCHEMA },
});

export const ACCOUNT_SHADOW_BODY_SCHEMA: JsonSchema = specSchema(SHADOW_BODY, {
  required: ["change", "expires_at"],
  refine: { change: UPDATE_ACCOUNT_POLICY_BODY_SCHEMA },
});

function changeOf(body: Record<string, unknown>): AccountPolicyInput {
  if (body.change === undefined) throw badRequest("change is required (the body a PUT takes)");
  return accountPolicyInputFromJson(body.change as Record<string, unknown>, "update");
}

/** A workspace-wide policy's simulate body: the change (its PUT body) and the window replayed. */
export function accountSimulateRequestFromJson(body: Record<string, unknown>): {
  change: AccountPolicyInput;
  from?: Timestamp;
  to?: Timestamp;
} {
  checkFields(body, SIMULATE_BODY);
  const change = changeOf(body);
  return { change, from: instant(body, "from"), to: instant(body, "to") };
}

/** A workspace-wide policy's shadow body: the change (its PUT body) and when it ends. */
export function accountShadowRequestFromJson(body: Record<string, unknown>): {
  change: AccountPolicyInput;
  expiresAt: Timestamp;
} {
  checkFields(body, SHADOW_BODY);
  const change = changeOf(body);
  return { change, expiresAt: shadowExpiresAt(body) };
}

/** A workspace-wide policy's change in the words of its PUT body: the fields it sends. */
function accountChangeToJson(input: AccountPolicyInput | undefined): JsonObject {
  if (!input) return {};
  const out: JsonObject = { name: input.name, config: (input.config ?? {}) as JsonObject };
  if (input.isDefault !== undefined) out.is_default = input.isDefault;
  if (input.workspaceIds) out.workspace_ids = input.workspaceIds.ids;
  if (input.optedOutWorkspaceIds) out.opted_out_workspace_ids = input.optedOutWorkspaceIds.ids;
  return out;
}

/**
 * A workspace-wide policy shadow's report: a guardrail shadow's, with the change as its PUT
 * body and the workspaces whose records it counts.
 */
export function accountShadowToJson(r: GetAccountPolicyShadowResponse) {
  return {
    ...shadowReportToJson(r, accountChangeToJson(r.shadow?.change)),
    workspace_ids: r.workspaceIds,
  };
}

/** A start's answer as a report: nothing decided yet, over the workspaces it will count. */
export function accountShadowStartedToJson(res: StartAccountPolicyShadowResponse) {
  return accountShadowToJson(
    create(GetAccountPolicyShadowResponseSchema, {
      shadow: res.shadow,
      workspaceIds: res.workspaceIds,
    }),
  );
}

export const ACCOUNT_SHADOW_JSON_SCHEMA: JsonSchema = shapeOf<
  ReturnType<typeof accountShadowToJson>
>({
  ...(SHADOW_JSON_SCHEMA.properties as Record<keyof ShadowJson, JsonSchema>),
  workspace_ids: STRINGS,
});
