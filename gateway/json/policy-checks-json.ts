import { create, type JsonObject } from "@bufbuild/protobuf";
import {
  type GuardrailCheckList,
  GuardrailCheckListSchema,
  type GuardrailInput,
  GuardrailInputSchema,
  GuardrailSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type {
  GuardrailPolicy,
  GuardrailPolicyVersion,
} from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import {
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { badRequest, type FieldSpec, has } from "./fields.js";
import { GUARDRAIL_JSON_OVERRIDES } from "./guardrail-json.js";
import { isoOrNull, ProtoJson } from "./proto-json.js";

/** A policy's checks read and written exactly as a guardrail's are (the same names and rules). */
const json = new ProtoJson(GUARDRAIL_JSON_OVERRIDES);

const CHECKS_FIELDS = [GuardrailSchema.field.checks, GuardrailSchema.field.lastCheckRun];

/** `checks` in a policy body's field table: a list, or null to remove them. */
export const CHECKS_SPEC: FieldSpec = { type: "array", nullable: true };

/** The checks a body sets: undefined when it leaves them out; empty (none) for null or []. */
export function policyChecksFromJson(
  body: Record<string, unknown>,
): GuardrailCheckList | undefined {
  if (!has(body, "checks")) return undefined;
  if (body.checks === null) return create(GuardrailCheckListSchema);
  const input = json.read<GuardrailInput>(GuardrailInputSchema, { checks: body.checks });
  return input.checks ?? create(GuardrailCheckListSchema);
}

/** `force` of a PUT: no field of the policy, it applies a change whose checks fail. */
export function forceOf(body: Record<string, unknown>): {
  force: boolean;
  fields: Record<string, unknown>;
} {
  const { force, ...fields } = body;
  if (force !== undefined && typeof force !== "boolean")
    throw badRequest("force must be true or false");
  return { force: force === true, fields };
}

/** A policy's `checks` and `last_check_run` as the guardrail's JSON writes them. */
export function policyChecksToJson(p: Pick<GuardrailPolicy, "checks" | "lastCheckRun">): {
  checks: unknown;
  last_check_run: unknown;
} {
  const g = create(GuardrailSchema, { checks: p.checks, lastCheckRun: p.lastCheckRun });
  const out = json.write(g, CHECKS_FIELDS);
  return { checks: out.checks ?? null, last_check_run: out.last_check_run ?? null };
}

const OUTPUT = json.outputSchema(GuardrailSchema, CHECKS_FIELDS) as {
  properties: Record<string, JsonSchema>;
};

/** The output schemas of `checks` and `last_check_run` (the guardrail's). */
export const POLICY_CHECKS_OUTPUT: { checks: JsonSchema; last_check_run: JsonSchema } = {
  checks: OUTPUT.properties.checks as JsonSchema,
  last_check_run: OUTPUT.properties.last_check_run as JsonSchema,
};

/** The input schema of `checks` (the guardrail's rules; CHECKS_SPEC adds null). */
export const POLICY_CHECKS_INPUT: JsonSchema = (
  json.schema(GuardrailInputSchema).properties as Record<string, JsonSchema>
).checks as JsonSchema;

/** One version as the API answers it: who made it, when, what changed. */
export function policyVersionToJson(v: GuardrailPolicyVersion) {
  return {
    policy_id: v.policyId,
    policy_type: v.policyType,
    version: v.version,
    created_at: isoOrNull(v.createdAt) ?? "",
    actor: {
      key_hash: v.actor?.keyHash ?? "",
      label: v.actor?.label ?? "",
      name: v.actor?.name ?? "",
    },
    action: v.action,
    changes: (v.changes ?? {}) as JsonObject,
    forced: v.forced,
    restored_from: v.restoredFrom ?? null,
    deleted_at: isoOrNull(v.deletedAt),
  };
}

type VersionJson = ReturnType<typeof policyVersionToJson>;

export const POLICY_VERSION_PROPERTIES = {
  policy_id: { type: "string", format: "uuid" },
  policy_type: { type: "string", enum: ["budget", "model_availability", "moderation"] },
  version: { type: "integer", minimum: 1 },
  created_at: DATE_TIME,
  actor: shapeOf<VersionJson["actor"]>({
    key_hash: { type: "string", pattern: "^[0-9a-f]{64}$" },
    label: STRING,
    name: STRING,
  }),
  action: {
    type: "string",
    enum: ["guardrail_policy.create", "guardrail_policy.update", "guardrail_policy.restore"],
  },
  changes: {
    type: "object",
    description:
      "The fields the change made differ, each as { before, after } (null: unset), in the API's names",
    additionalProperties: shapeOf<{ before: unknown; after: unknown }>({ before: {}, after: {} }),
  },
  forced: BOOLEAN,
  restored_from: orNull({ type: "integer", minimum: 1 }),
  deleted_at: orNull(DATE_TIME),
} satisfies Record<keyof VersionJson, JsonSchema>;

export const POLICY_VERSION_SCHEMA: JsonSchema = shapeOf<VersionJson>(POLICY_VERSION_PROPERTIES);
