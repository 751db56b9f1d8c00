import type { JsonObject } from "@bufbuild/protobuf";
import type { GuardrailVersion } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import {
  BOOLEAN,
  DATE_TIME,
  type JsonSchema,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { badRequest, checkFields, type Spec } from "./fields.js";
import { GUARDRAIL_JSON_SCHEMA, guardrailToJson } from "./guardrail-json.js";
import { isoOrNull } from "./proto-json.js";

/** One version as the API answers it: who made it, when, what changed (the guardrail: one version's GET). */
export function guardrailVersionToJson(v: GuardrailVersion) {
  return {
    guardrail_id: v.guardrailId,
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

export function guardrailVersionWithGuardrailToJson(v: GuardrailVersion) {
  return {
    ...guardrailVersionToJson(v),
    guardrail: v.guardrail ? guardrailToJson(v.guardrail) : null,
  };
}

type VersionJson = ReturnType<typeof guardrailVersionWithGuardrailToJson>;

const VERSION_PROPERTIES = {
  guardrail_id: { type: "string", format: "uuid" },
  version: { type: "integer", minimum: 1 },
  created_at: DATE_TIME,
  actor: shapeOf<VersionJson["actor"]>({
    key_hash: { type: "string", pattern: "^[0-9a-f]{64}$" },
    label: STRING,
    name: STRING,
  }),
  action: { type: "string", enum: ["guardrail.create", "guardrail.update", "guardrail.restore"] },
  changes: {
    type: "object",
    description: "The fields the change made differ, each as { before, after } (null: unset)",
    additionalProperties: shapeOf<{ before: unknown; after: unknown }>({ before: {}, after: {} }),
  },
  forced: BOOLEAN,
  restored_from: orNull({ type: "integer", minimum: 1 }),
  deleted_at: orNull(DATE_TIME),
} satisfies Record<keyof ReturnType<typeof guardrailVersionToJson>, JsonSchema>;

export const GUARDRAIL_VERSION_SCHEMA: JsonSchema =
  shapeOf<ReturnType<typeof guardrailVersionToJson>>(VERSION_PROPERTIES);

export const GUARDRAIL_VERSION_WITH_GUARDRAIL_SCHEMA: JsonSchema = shapeOf<VersionJson>({
  ...VERSION_PROPERTIES,
  guardrail: orNull(GUARDRAIL_JSON_SCHEMA),
});

/** The {n} of a version's path: a whole number from 1. */
export function versionOfPath(raw: string | undefined): number {
  const n = Number(raw);
  if (!/^[1-9][0-9]{0,8}$/.test(raw ?? "") || !Number.isSafeInteger(n))
    throw badRequest(`version must be a whole number from 1, got ${JSON.stringify(raw ?? "")}`);
  return n;
}

/** A restore's body: nothing, or `force`. */
export const RESTORE_BODY: Spec = { force: { type: "boolean" } };

/** Whether a restore is forced past failing checks (an empty body is not). */
export function restoreForceOf(body: Record<string, unknown>): boolean {
  checkFields(body, RESTORE_BODY);
  return body.force === true;
}
