import type { DescEnum, DescField, DescMessage, JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type Guardrail, GuardrailSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { enumNamesOf } from "../../platform/enum-names.js";

/** Bookkeeping, not policy: a change of these alone is no change an operator made. */
const LEFT_OUT = new Set([
  "id",
  "created_at",
  "updated_at",
  "version",
  "is_workspace_default",
  "last_check_run",
  // Its own audit events (shadow_start, shadow_end, a promoting update) say what it was.
  "shadow",
]);

type Value = unknown;

/** An enum value as the API spells it ("daily", "europe", "block"); null for UNSPECIFIED. */
function enumName(e: DescEnum, n: number): JsonValue {
  return enumNamesOf(e).name(n) ?? null;
}

function render(desc: DescMessage, msg: Record<string, Value>): JsonValue {
  const out: Record<string, JsonValue> = {};
  for (const field of desc.fields) {
    out[field.name] = renderField(field, msg[field.localName]);
  }
  // A wrapper of one list (StringList, RegionList, filter lists) is its list.
  const names = Object.keys(out);
  return names.length === 1 && names[0] === "values" ? (out.values ?? null) : out;
}

function renderField(field: DescField, v: Value): JsonValue {
  if (v === undefined || v === null) return null;
  switch (field.fieldKind) {
    case "scalar":
      return typeof v === "bigint" ? String(v) : (v as JsonValue);
    case "enum":
      return enumName(field.enum, v as number);
    case "message":
      if (field.message.typeName === "google.protobuf.Timestamp")
        return timestampDate(v as Parameters<typeof timestampDate>[0]).toISOString();
      return render(field.message, v as Record<string, Value>);
    case "list":
      return (v as Value[]).map((item) =>
        field.listKind === "message"
          ? render(field.message, item as Record<string, Value>)
          : field.listKind === "enum"
            ? enumName(field.enum, item as number)
            : (item as JsonValue),
      );
    case "map":
      return v as JsonValue;
  }
}

/**
 * A guardrail's policy fields for the audit log, in the API's names and values (lists as
 * lists, enums by name, null for unset), so a change reads as the PATCH that made it.
 */
export function guardrailAuditFields(g: Guardrail): Record<string, JsonValue> {
  const out: Record<string, JsonValue> = {};
  for (const field of GuardrailSchema.fields) {
    if (LEFT_OUT.has(field.name)) continue;
    out[field.name] = renderField(field, (g as unknown as Record<string, Value>)[field.localName]);
  }
  return out;
}
