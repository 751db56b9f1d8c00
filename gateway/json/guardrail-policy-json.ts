import { create, type JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { GUARDRAIL_LIMITS } from "../../domain/limits.js";
import {
  type AccountPolicy,
  type AccountPolicyInput,
  AccountPolicyInputSchema,
  type ChangePolicyAssignmentRequest,
  type GuardrailPolicy,
  type GuardrailPolicyInput,
  GuardrailPolicyInputSchema,
  type PolicyAssignmentState,
  PolicyAssignmentStateSchema,
  SubjectListSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { POLICY_TYPES } from "../../store/policies/types.js";
import {
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  orNull,
  STRING,
  STRINGS,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import { badRequest, checkElements, checkFields, has, NOT_BLANK, type Spec } from "./fields.js";
import {
  CHECKS_SPEC,
  POLICY_CHECKS_INPUT,
  POLICY_CHECKS_OUTPUT,
  policyChecksFromJson,
  policyChecksToJson,
} from "./policy-checks-json.js";
import { isoOrNull } from "./proto-json.js";

type Body = Record<string, unknown>;

const SUBJECTS = { type: "array" as const, rules: { maxItems: GUARDRAIL_LIMITS.subjectsMax } };

/** The fields of OpenRouter's Create/Update<Type>GuardrailPolicyRequest. */
const POLICY_SPEC: Spec = {
  name: {
    type: "string",
    rules: { minLength: 1, maxLength: GUARDRAIL_LIMITS.nameMax, pattern: NOT_BLANK },
  },
  policy_type: { type: "string", rules: { enum: [...POLICY_TYPES] } },
  config: { type: "object" },
  workspace_id: { type: "string" },
  api_key_hashes: SUBJECTS,
  member_ids: SUBJECTS,
  is_workspace_default: { type: "boolean" },
  opted_out_api_key_hashes: SUBJECTS,
  opted_out_member_ids: SUBJECTS,
  checks: CHECKS_SPEC,
};

const LIST_FIELDS = [
  "api_key_hashes",
  "member_ids",
  "opted_out_api_key_hashes",
  "opted_out_member_ids",
] as const;

const REFINE = {
  ...Object.fromEntries(LIST_FIELDS.map((f) => [f, STRINGS])),
  checks: POLICY_CHECKS_INPUT,
};

export const CREATE_POLICY_BODY_SCHEMA: JsonSchema = specSchema(POLICY_SPEC, {
  required: ["name", "policy_type", "config"],
  refine: REFINE,
});
export const UPDATE_POLICY_BODY_SCHEMA: JsonSchema = specSchema(
  { ...POLICY_SPEC, force: { type: "boolean" } },
  {
    required: ["name", "config"],
    refine: {
      ...REFINE,
      force: {
        type: "boolean",
        description:
          "Apply the change although some of the policy's checks fail (audited as forced)",
      },
    },
  },
);

function required(body: Body, names: readonly string[], where = ""): void {
  for (const name of names) if (!has(body, name)) throw badRequest(`${where}${name} is required`);
}

/**
 * A create or update body as the service's input. The path names the type: a body's
 * policy_type must agree with it (create requires it, as OpenRouter's request does).
 */
export function policyInputFromJson(
  body: Body,
  type: string,
  mode: "create" | "update",
): GuardrailPolicyInput {
  checkFields(body, POLICY_SPEC);
  required(body, mode === "create" ? ["name", "policy_type", "config"] : ["name", "config"]);
  if (has(body, "policy_type") && body.policy_type !== type)
    throw badRequest(
      `policy_type must be "${type}" on this path, got "${String(body.policy_type)}"`,
    );
  const input = create(GuardrailPolicyInputSchema, {
    policyType: type,
    name: body.name as string,
    config: body.config as JsonObject,
    workspaceId: body.workspace_id as string | undefined,
    isWorkspaceDefault: body.is_workspace_default as boolean | undefined,
    checks: policyChecksFromJson(body),
  });
  for (const field of LIST_FIELDS) {
    if (!has(body, field)) continue;
    const values = body[field] as unknown[];
    checkElements(field, values, "string");
    const list = create(SubjectListSchema, { ids: values as string[] });
    if (field === "api_key_hashes") input.apiKeyHashes = list;
    if (field === "member_ids") input.memberIds = list;
    if (field === "opted_out_api_key_hashes") input.optedOutApiKeyHashes = list;
    if (field === "opted_out_member_ids") input.optedOutMemberIds = list;
  }
  return input;
}

/** OpenRouter's <Type>GuardrailPolicyDetail (get, create, update). */
export function policyDetailToJson(p: GuardrailPolicy) {
  return {
    id: p.id,
    name: p.name,
    policy_type: p.policyType,
    config: (p.config ?? {}) as JsonObject,
    workspace_id: p.workspaceId,
    api_key_hashes: p.apiKeyHashes,
    member_ids: p.memberIds,
    is_workspace_default: p.isWorkspaceDefault,
    opted_out_api_key_hashes: p.optedOutApiKeyHashes,
    opted_out_member_ids: p.optedOutMemberIds,
    overridden_api_key_hashes: p.overriddenApiKeyHashes,
    overridden_member_ids: p.overriddenMemberIds,
    // A mapped policy is the view of a guardrail; account-wide defaults are not served.
    reference: p.legacyGuardrailIds.length > 0 ? ("legacy_mapping" as const) : null,
    is_legacy_mapped: p.legacyGuardrailIds.length > 0,
    legacy_guardrail_ids: p.legacyGuardrailIds,
    updated_at: isoOrNull(p.updatedAt),
    ...policyChecksToJson(p),
    shadow: shadowRunning(p.shadow),
  };
}

/** Whether a shadow runs, so a reader need not probe .../shadow (which has its report). */
function shadowRunning(s: { startedAt?: Timestamp; expiresAt?: Timestamp } | undefined) {
  return s ? { started_at: isoOrNull(s.startedAt), expires_at: isoOrNull(s.expiresAt) } : null;
}

const SHADOW_RUNNING: JsonSchema = orNull({
  type: "object",
  required: ["started_at", "expires_at"],
  properties: { started_at: orNull(DATE_TIME), expires_at: orNull(DATE_TIME) },
});

/** OpenRouter's <Type>GuardrailPolicySummary (list). */
export function policySummaryToJson(p: GuardrailPolicy) {
  return {
    id: p.id,
    name: p.name,
    policy_type: p.policyType,
    config: (p.config ?? {}) as JsonObject,
    workspace_id: p.workspaceId,
    api_key_count: p.apiKeyHashes.length,
    member_count: p.memberIds.length,
    is_workspace_default: p.isWorkspaceDefault,
    is_legacy_mapped: p.legacyGuardrailIds.length > 0,
    legacy_guardrail_ids: p.legacyGuardrailIds,
    replaced_legacy_guardrail_ids: p.replacedLegacyGuardrailIds,
    updated_at: isoOrNull(p.updatedAt),
  };
}

const CONFIG: JsonSchema = { type: "object" };
const POLICY_TYPE: JsonSchema = { type: "string", enum: [...POLICY_TYPES] };
const COUNT: JsonSchema = { type: "integer", minimum: 0 };

export const POLICY_DETAIL_SCHEMA = shapeOf<ReturnType<typeof policyDetailToJson>>({
  id: STRING,
  name: STRING,
  policy_type: POLICY_TYPE,
  config: CONFIG,
  workspace_id: STRING,
  api_key_hashes: STRINGS,
  member_ids: STRINGS,
  is_workspace_default: BOOLEAN,
  opted_out_api_key_hashes: STRINGS,
  opted_out_member_ids: STRINGS,
  overridden_api_key_hashes: STRINGS,
  overridden_member_ids: STRINGS,
  reference: orNull({ type: "string", enum: ["legacy_mapping", "account_default"] }),
  is_legacy_mapped: BOOLEAN,
  legacy_guardrail_ids: STRINGS,
  updated_at: orNull(DATE_TIME),
  ...POLICY_CHECKS_OUTPUT,
  shadow: SHADOW_RUNNING,
});

export const POLICY_SUMMARY_SCHEMA = shapeOf<ReturnType<typeof policySummaryToJson>>({
  id: STRING,
  name: STRING,
  policy_type: POLICY_TYPE,
  config: CONFIG,
  workspace_id: STRING,
  api_key_count: COUNT,
  member_count: COUNT,
  is_workspace_default: BOOLEAN,
  is_legacy_mapped: BOOLEAN,
  legacy_guardrail_ids: STRINGS,
  replaced_legacy_guardrail_ids: STRINGS,
  updated_at: orNull(DATE_TIME),
});

// Assignments.

export function assignmentStateToJson(s: PolicyAssignmentState | undefined) {
  return {
    opted_out: s?.optedOut ?? false,
    policy_ids: s?.policyIds ?? [],
    workspace_default_policy_ids: s?.workspaceDefaultPolicyIds ?? [],
  };
}

export const ASSIGNMENT_STATE_SCHEMA = shapeOf<ReturnType<typeof assignmentStateToJson>>({
  opted_out: BOOLEAN,
  policy_ids: STRINGS,
  workspace_default_policy_ids: STRINGS,
});

export const CHANGED_SCHEMA = shapeOf<{ data: boolean }>({ data: BOOLEAN });

export const ASSIGNMENT_QUERY = ["workspace_id", "policy_type"] as const;
export const ASSIGNMENT_QUERY_RULES: Record<string, JsonSchema> = {
  policy_type: POLICY_TYPE,
};

const STATE_SPEC: Spec = {
  opted_out: { type: "boolean" },
  policy_ids: { type: "array" },
  workspace_default_policy_ids: { type: "array" },
};

const CHANGE_SPEC: Spec = {
  assigned: { type: "boolean" },
  expected_assignment: { type: "object" },
  policy_id: { type: "string" },
  policy_type: { type: "string", rules: { enum: [...POLICY_TYPES] } },
  workspace_id: { type: "string" },
};
const CHANGE_REQUIRED = ["assigned", "expected_assignment", "policy_id", "policy_type"] as const;

export const CHANGE_ASSIGNMENT_BODY_SCHEMA: JsonSchema = specSchema(CHANGE_SPEC, {
  required: CHANGE_REQUIRED,
  refine: {
    expected_assignment: {
      ...specSchema(STATE_SPEC, {
        required: Object.keys(STATE_SPEC),
        refine: { policy_ids: STRINGS, workspace_default_policy_ids: STRINGS },
      }),
    },
  },
});

/** OpenRouter's ChangeGuardrailPolicyAssignmentRequest, for the subject the path names. */
export function changeAssignmentFromJson(
  body: Body,
  subjectKind: "api_key" | "member",
  subject: string,
): Omit<ChangePolicyAssignmentRequest, "$typeName" | "$unknown"> {
  checkFields(body, CHANGE_SPEC);
  required(body, CHANGE_REQUIRED);
  const expected = body.expected_assignment as Body;
  checkFields(expected, STATE_SPEC, "expected_assignment.");
  required(expected, Object.keys(STATE_SPEC), "expected_assignment.");
  checkElements("expected_assignment.policy_ids", expected.policy_ids as unknown[], "string");
  checkElements(
    "expected_assignment.workspace_default_policy_ids",
    expected.workspace_default_policy_ids as unknown[],
    "string",
  );
  return {
    subjectKind,
    subject,
    workspaceId: (body.workspace_id as string | undefined) ?? "",
    policyType: body.policy_type as string,
    policyId: body.policy_id as string,
    assigned: body.assigned as boolean,
    expectedAssignment: create(PolicyAssignmentStateSchema, {
      optedOut: expected.opted_out as boolean,
      policyIds: expected.policy_ids as string[],
      workspaceDefaultPolicyIds: expected.workspace_default_policy_ids as string[],
    }),
  };
}

// Workspace-wide ("account") policies.

const ACCOUNT_SPEC: Spec = {
  name: POLICY_SPEC.name as Spec[string],
  policy_type: POLICY_SPEC.policy_type as Spec[string],
  config: { type: "object" },
  is_default: { type: "boolean" },
  workspace_ids: SUBJECTS,
  opted_out_workspace_ids: SUBJECTS,
  checks: CHECKS_SPEC,
};
const ACCOUNT_LISTS = ["workspace_ids", "opted_out_workspace_ids"] as const;
const ACCOUNT_REFINE = {
  ...Object.fromEntries(ACCOUNT_LISTS.map((f) => [f, STRINGS])),
  checks: POLICY_CHECKS_INPUT,
};

export const CREATE_ACCOUNT_POLICY_BODY_SCHEMA: JsonSchema = specSchema(ACCOUNT_SPEC, {
  required: ["name", "policy_type", "config"],
  refine: ACCOUNT_REFINE,
});
export const UPDATE_ACCOUNT_POLICY_BODY_SCHEMA: JsonSchema = specSchema(
  { ...ACCOUNT_SPEC, force: { type: "boolean" } },
  {
    required: ["name", "config"],
    refine: {
      ...ACCOUNT_REFINE,
      force: {
        type: "boolean",
        description:
          "Apply the change although some of the policy's checks fail (audited as forced)",
      },
    },
  },
);

/** A create or update body of a workspace-wide policy as the service's input. */
export function accountPolicyInputFromJson(
  body: Body,
  mode: "create" | "update",
): AccountPolicyInput {
  checkFields(body, ACCOUNT_SPEC);
  required(body, mode === "create" ? ["name", "policy_type", "config"] : ["name", "config"]);
  const input = create(AccountPolicyInputSchema, {
    policyType: (body.policy_type as string | undefined) ?? "",
    name: body.name as string,
    config: body.config as JsonObject,
    isDefault: body.is_default as boolean | undefined,
    checks: policyChecksFromJson(body),
  });
  for (const field of ACCOUNT_LISTS) {
    if (!has(body, field)) continue;
    const values = body[field] as unknown[];
    checkElements(field, values, "string");
    const list = create(SubjectListSchema, { ids: values as string[] });
    if (field === "workspace_ids") input.workspaceIds = list;
    else input.optedOutWorkspaceIds = list;
  }
  return input;
}

/** OpenRouter's AccountGuardrailPolicy. */
export function accountPolicyToJson(p: AccountPolicy) {
  return {
    id: p.id,
    name: p.name,
    policy_type: p.policyType,
    config: (p.config ?? {}) as JsonObject,
    is_default: p.isDefault,
    workspace_ids: p.workspaceIds,
    opted_out_workspace_ids: p.optedOutWorkspaceIds,
    // The workspaces it names (a default covers every workspace but the opted-out ones).
    workspace_count: p.workspaceIds.length,
    // Nothing is synced from guardrails into workspace-wide policies here.
    is_synced: false,
    is_workspace_default_synced: false,
    created_at: isoOrNull(p.createdAt),
    updated_at: isoOrNull(p.updatedAt),
    ...policyChecksToJson(p),
    shadow: shadowRunning(p.shadow),
  };
}

export const ACCOUNT_POLICY_SCHEMA = shapeOf<ReturnType<typeof accountPolicyToJson>>({
  id: STRING,
  name: STRING,
  policy_type: POLICY_TYPE,
  config: CONFIG,
  is_default: BOOLEAN,
  workspace_ids: STRINGS,
  opted_out_workspace_ids: STRINGS,
  workspace_count: COUNT,
  is_synced: BOOLEAN,
  is_workspace_default_synced: BOOLEAN,
  created_at: orNull(DATE_TIME),
  updated_at: orNull(DATE_TIME),
  ...POLICY_CHECKS_OUTPUT,
  shadow: SHADOW_RUNNING,
});
