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

/** `schema`, null allowed too (in its type, and in its enum when it has one). */
export function orNull(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema };
  if (typeof schema.type === "string") out.type = [schema.type, "null"];
  if (Array.isArray(schema.enum)) out.enum = [...schema.enum, null];
  return out;
}

/**
 * One field of a checkFields table as JSON Schema: the same type rule, the value rules the
 * table carries (the service's own constants), null only when allowed.
 */
export function fieldSchema(field: FieldSpec): JsonSchema {
  const schema = { ...BASE[field.type], ...field.rules };
  return field.nullable ? orNull(schema) : schema;
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
      ? field.nullable
        ? orNull({ ...refined, ...field.rules })
        : { ...refined, ...field.rules }
      : fieldSchema(field);
  }
  const schema: JsonSchema = { type: "object", properties, additionalProperties: false };
  if (options.required && options.required.length > 0) schema.required = [...options.required];
  return schema;
}

/** Building blocks of response schemas. */
export const STRING: JsonSchema = { type: "string" };
export const NUMBER: JsonSchema = { type: "number" };
export const INTEGER: JsonSchema = { type: "integer" };
export const BOOLEAN: JsonSchema = { type: "boolean" };
export const NULL: JsonSchema = { type: "null" };
export const DATE_TIME: JsonSchema = { type: "string", format: "date-time" };
export const STRINGS: JsonSchema = { type: "array", items: STRING };

export function arrayOf(items: JsonSchema): JsonSchema {
  return { type: "array", items };
}

/**
 * The schema of what a renderer returns: `T` is the renderer's return type, so a property
 * the renderer adds or drops without its schema here is a compile error (a missing key, or an
 * excess one in the literal). Every key is always present: the renderers write null, not
 * nothing.
 */
export function shapeOf<T extends object>(
  properties: { [K in keyof T]-?: JsonSchema },
): JsonSchema {
  return {
    type: "object",
    required: Object.keys(properties),
    properties,
    additionalProperties: false,
  };
}

/** `{ data: <item> }`, the envelope of one resource. */
export function dataOf(item: JsonSchema): JsonSchema {
  return shapeOf<{ data: unknown }>({ data: item });
}

/** `{ data: [<item>], total_count }`, the envelope of a page of a list. */
export function pageOf(item: JsonSchema): JsonSchema {
  return shapeOf<{ data: unknown; total_count: unknown }>({
    data: arrayOf(item),
    total_count: { type: "integer", minimum: 0 },
  });
}

/** `{ deleted: true }`. */
export const DELETED: JsonSchema = shapeOf<{ deleted: boolean }>({ deleted: BOOLEAN });
