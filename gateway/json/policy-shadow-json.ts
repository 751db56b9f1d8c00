import type { JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type {
  GetGuardrailPolicyShadowResponse,
  GuardrailPolicyInput,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { type JsonSchema, specSchema } from "../openapi/spec-schema.js";
import { badRequest, checkFields, type Spec } from "./fields.js";
import { policyInputFromJson, UPDATE_POLICY_BODY_SCHEMA } from "./guardrail-policy-json.js";
import { INSTANT_PATTERN, parseInstant } from "./instant.js";
import { shadowExpiresAt, shadowReportToJson } from "./shadow-json.js";

type Body = Record<string, unknown>;

const INSTANT = { type: "string", nullable: true, rules: { pattern: INSTANT_PATTERN } } as const;

export const SIMULATE_BODY: Spec = { change: { type: "object" }, from: INSTANT, to: INSTANT };
export const SHADOW_BODY: Spec = {
  change: { type: "object" },
  expires_at: { type: "string", rules: { pattern: INSTANT_PATTERN } },
};

export const POLICY_SIMULATE_BODY_SCHEMA: JsonSchema = specSchema(SIMULATE_BODY, {
  required: ["change"],
  refine: { change: UPDATE_POLICY_BODY_SCHEMA },
});

export const POLICY_SHADOW_BODY_SCHEMA: JsonSchema = specSchema(SHADOW_BODY, {
  required: ["change", "expires_at"],
  refine: { change: UPDATE_POLICY_BODY_SCHEMA },
});

export function instant(body: Body, name: string): Timestamp | undefined {
  const raw = body[name];
  if (raw === undefined || raw === null) return undefined;
  const at = parseInstant(raw as string);
  if (!at) throw badRequest(`${name} must be an ISO 8601 date-time, e.g. 2026-11-26T08:00:00Z`);
  return timestampFromDate(at);
}

/** The change: a PUT body of the path's type, with the PUT's own messages. */
function changeOf(body: Body, type: string): GuardrailPolicyInput {
  if (body.change === undefined) throw badRequest("change is required (the body a PUT takes)");
  return policyInputFromJson(body.change as Body, type, "update");
}

/** A policy simulate body: the change (a PUT body) and the window replayed. */
export function policySimulateRequestFromJson(
  body: Body,
  type: string,
): { change: GuardrailPolicyInput; from?: Timestamp; to?: Timestamp } {
  checkFields(body, SIMULATE_BODY);
  const change = changeOf(body, type);
  return { change, from: instant(body, "from"), to: instant(body, "to") };
}

/** A policy shadow body: the change (a PUT body) and when it ends. */
export function policyShadowRequestFromJson(
  body: Body,
  type: string,
): { change: GuardrailPolicyInput; expiresAt: Timestamp } {
  checkFields(body, SHADOW_BODY);
  const change = changeOf(body, type);
  return { change, expiresAt: shadowExpiresAt(body) };
}

/** A replace's input in the words of its PUT body: the fields it sends, nothing else. */
export function policyChangeToJson(input: GuardrailPolicyInput | undefined): JsonObject {
  if (!input) return {};
  const out: JsonObject = { name: input.name, config: (input.config ?? {}) as JsonObject };
  if (input.workspaceId !== undefined) out.workspace_id = input.workspaceId;
  if (input.apiKeyHashes) out.api_key_hashes = input.apiKeyHashes.ids;
  if (input.memberIds) out.member_ids = input.memberIds.ids;
  if (input.isWorkspaceDefault !== undefined) out.is_workspace_default = input.isWorkspaceDefault;
  if (input.optedOutApiKeyHashes) out.opted_out_api_key_hashes = input.optedOutApiKeyHashes.ids;
  if (input.optedOutMemberIds) out.opted_out_member_ids = input.optedOutMemberIds.ids;
  return out;
}

/** A policy shadow's report: a guardrail shadow's, with the change as its PUT body. */
export function policyShadowToJson(r: GetGuardrailPolicyShadowResponse) {
  return shadowReportToJson(r, policyChangeToJson(r.shadow?.change));
}
