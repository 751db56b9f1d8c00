import { type FieldSpec, type FieldType, INT32_MAX, INT32_MIN, type Spec } from "../json/fields.js";

/** The subset of JSON Schema (2020-12, OpenAPI 3.1's dialect) the document uses. */
export type JsonSchema = { [keyword: string]: unknown };

const BASE: Record<FieldType, JsonSchema> = {
  string: { type: "string" },
  boolean: { type: "boolean" },
  number: { type: "number" },
  int32: { type: "integer", minimum: INT32_MIN, maximum: INT32_MAX },
  array: { type: "array" },
  object: { type: "object" },
};

/** One field of a checkFields table as JSON Schema: the same type rule, null only when allowed. */
export function fieldSchema(field: FieldSpec): JsonSchema {
  const base = BASE[field.type];
  return field.nullable ? { ...base, type: [base.type, "null"] } : { ...base };
}

/**
 * A checkFields table as the schema of a JSON object body: the validator refuses unknown
 * fields, so the schema does too (additionalProperties: false). `refine` replaces a field's
 * schema where the table only knows "array" or "object" and the handler checks deeper
 * (say, the element type); `required` lists what the handler requires.
 */
export function specSchema(
  spec: Spec,
  options: { required?: readonly string[]; refine?: Record<string, JsonSchema> } = {},
): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const [name, field] of Object.entries(spec)) {
    const refined = options.refine?.[name];
    properties[name] = refined
      ? { ...refined, ...(field.nullable ? { type: [refined.type, "null"] } : {}) }
      : fieldSchema(field);
  }
  const schema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (options.required && options.required.length > 0) schema.required = [...options.required];
  return schema;
}
