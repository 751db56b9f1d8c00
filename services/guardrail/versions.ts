import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { GUARDRAIL_FIELDS } from "../../domain/guardrail-fields.js";
import {
  type GuardrailInput,
  GuardrailInputSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  type GuardrailVersion,
  GuardrailVersionSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { decodeFields } from "../../store/guardrail-fields.js";
import type { GuardrailVersionRow } from "../../store/request-log/guardrail-versions.js";

/** A stored version as the API answers it; the guardrail it left only when asked for one. */
export function versionMessage(row: GuardrailVersionRow, withGuardrail = false): GuardrailVersion {
  return create(GuardrailVersionSchema, {
    guardrailId: row.guardrailId,
    version: row.version,
    createdAt: timestampFromDate(row.at),
    actor: row.actor,
    action: row.action,
    changes: row.changes as JsonObject,
    forced: row.forced,
    restoredFrom: row.restoredFrom ?? undefined,
    guardrail: withGuardrail && row.data ? decodeFields([row.data], row.version) : undefined,
    deletedAt: row.deletedAt ? timestampFromDate(row.deletedAt) : undefined,
  });
}

/** The writable fields: what a restore sets, every one of them, as the version had it. */
const RESTORED = GUARDRAIL_FIELDS.fields.filter((f) => f.role === "writable");

/** The update that makes a guardrail equal to a version: each writable field, unset as null. */
export function inputOfVersion(row: GuardrailVersionRow): {
  input: GuardrailInput;
  paths: string[];
} {
  const g = decodeFields(row.data ? [row.data] : [], row.version) as unknown as Record<
    string,
    unknown
  >;
  const input = create(GuardrailInputSchema) as unknown as Record<string, unknown>;
  for (const f of RESTORED) {
    const twin = f.input;
    if (twin) input[twin.localName] = g[f.field.localName];
  }
  return { input: input as unknown as GuardrailInput, paths: RESTORED.map((f) => f.name) };
}
