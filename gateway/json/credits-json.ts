import type { MessageInitShape } from "@bufbuild/protobuf";
import { ACCOUNT_LIMITS } from "../../domain/limits.js";
import type {
  AddCreditsRequestSchema,
  AddCreditsResponse,
  GetCreditsRequestSchema,
  GetCreditsResponse,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import {
  BOOLEAN,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { badRequest, checkFields, checkQuery, type Spec } from "./fields.js";

type Json = Record<string, unknown>;

function creditsToJson(res: GetCreditsResponse) {
  return {
    total_credits: res.totalCreditsUsd,
    total_usage: res.totalUsageUsd,
    balance_usd: res.balanceUsd ?? null,
    metered: res.balanceUsd !== undefined,
  };
}

/** GET /credits: the organization's credits (workspace_id null) or one workspace's. */
export function organizationCreditsToJson(res: GetCreditsResponse) {
  return { data: { ...creditsToJson(res), workspace_id: res.workspaceId || null } };
}

/** GET /workspaces/:id/credits: the workspace first, as it always was. */
export function workspaceCreditsToJson(res: GetCreditsResponse) {
  return { data: { workspace_id: res.workspaceId, ...creditsToJson(res) } };
}

/** POST /workspaces/:id/credits: a top-up makes the workspace metered. */
export function addedCreditsToJson(res: AddCreditsResponse) {
  return {
    data: { workspace_id: res.workspaceId, balance_usd: res.balanceUsd, metered: true as const },
  };
}

type CreditsJson = ReturnType<typeof creditsToJson>;
/** What creditsToJson renders; shapeOf makes a field added there without its schema a compile error. */
const CREDITS_JSON = {
  total_credits: NUMBER,
  total_usage: NUMBER,
  balance_usd: orNull(NUMBER),
  metered: BOOLEAN,
} satisfies { [K in keyof CreditsJson]-?: JsonSchema };

type OrganizationJson = ReturnType<typeof organizationCreditsToJson>;
/** What organizationCreditsToJson renders: workspace_id null for every workspace together. */
export const ORGANIZATION_CREDITS_JSON_SCHEMA: JsonSchema = shapeOf<OrganizationJson>({
  data: shapeOf<OrganizationJson["data"]>({ ...CREDITS_JSON, workspace_id: orNull(STRING) }),
});

type WorkspaceJson = ReturnType<typeof workspaceCreditsToJson>;
/** What workspaceCreditsToJson renders. */
export const WORKSPACE_CREDITS_JSON_SCHEMA: JsonSchema = shapeOf<WorkspaceJson>({
  data: shapeOf<WorkspaceJson["data"]>({ ...CREDITS_JSON, workspace_id: STRING }),
});

type AddedJson = ReturnType<typeof addedCreditsToJson>;
/** What addedCreditsToJson renders. */
export const ADDED_CREDITS_JSON_SCHEMA: JsonSchema = shapeOf<AddedJson>({
  data: shapeOf<AddedJson["data"]>({
    workspace_id: STRING,
    balance_usd: NUMBER,
    metered: { const: true },
  }),
});

export const CREDITS_QUERY = ["workspace_id"] as const;

/** GET /credits's query -> GetCreditsRequest: every workspace together, or the one named. */
export function creditsRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof GetCreditsRequestSchema> {
  checkQuery(q, CREDITS_QUERY);
  const workspaceId = q.get("workspace_id");
  if (workspaceId === "") throw badRequest("workspace_id must not be empty");
  return { workspaceId: workspaceId ?? "" };
}

const ADD_CREDITS_SPEC: Spec = {
  // Non-zero too (the service says so): JSON Schema has no "not 0" short of `not`.
  amount_usd: {
    type: "number",
    rules: {
      minimum: -ACCOUNT_LIMITS.topUpUsdMax,
      maximum: ACCOUNT_LIMITS.topUpUsdMax,
      not: { const: 0 },
    },
  },
};

export const ADD_CREDITS_BODY_SCHEMA: JsonSchema = specSchema(ADD_CREDITS_SPEC, {
  required: ["amount_usd"],
});

/** POST /workspaces/:id/credits's body -> AddCreditsRequest. */
export function addCreditsRequestFromJson(
  workspaceId: string,
  body: Json,
): MessageInitShape<typeof AddCreditsRequestSchema> {
  checkFields(body, ADD_CREDITS_SPEC);
  if (body.amount_usd === undefined) throw badRequest("amount_usd is required");
  return { workspaceId, amountUsd: body.amount_usd as number };
}
