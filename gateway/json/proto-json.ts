import {
  create,
  type DescField,
  type DescMessage,
  isFieldSet,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import {
  FeatureSet_FieldPresence,
  type Timestamp,
  TimestampSchema,
  timestampDate,
} from "@bufbuild/protobuf/wkt";
import {
  arrayOf,
  DATE_TIME,
  fieldSchema,
  type JsonSchema,
  orNull,
  specSchema,
} from "../openapi/spec-schema.js";
import { apiEnumOf } from "./enums.js";
import { checkElements, checkFields, type FieldType, type Spec } from "./fields.js";

/**
 * The API's JSON for a protobuf message, from its descriptor: the key is the
 * proto field name; strings, booleans and numbers are themselves; an enum is
 * its API name (enums.ts), null for the zero value; a timestamp is an ISO
 * string or null; a wrapper list (a message holding only `repeated values`,
 * how the proto says "nullable list") is the array or null; an unset field
 * with presence is null. On input every field may be null (its default, or
 * "no value"). Where the API deliberately says otherwise, an override says
 * so for that one field; there is no second list of fields. The OpenAPI
 * schemas come from the same walk: schema() for what read() takes (with the
 * overrides' value rules), outputSchema() for what write() gives.
 *
 * This is not protobuf's JSON mapping (toJson/fromJson): that writes enums
 * as "REGION_EUROPE", wrapper lists as {"values": [...]}, leaves unset
 * fields out rather than null, and has no "null means the default".
 */
export interface JsonOverride {
  /** Input: null is refused; the field takes a value or is left out. */
  readonly nonNull?: true;
  /** Input: accepted (a client may echo it back) and ignored: the service sets it. */
  readonly ignoredOnInput?: true;
  /** Output: left out when unset, or null when empty, instead of the plain value; or never written. */
  readonly output?: "omit-unset" | "empty-as-null" | "never";
  /**
   * Input, for the document: the field must be sent (in a list element; which top-level fields
   * an operation requires is the operation's, see schema()). The service checks it.
   */
  readonly required?: true;
  /**
   * Input, for the document: the rules on the value the service checks, as JSON Schema
   * keywords built from the service's own constants (lengths, ranges, counts); `items` holds a
   * list's rules on each element. An enum-typed field (or element) needs none for its names:
   * they come from the descriptor.
   */
  readonly rules?: JsonRules;
  /** Both ways, for the document: the string's JSON Schema format (say "uuid"). */
  readonly format?: string;
}

/** JSON Schema keywords on a value; `items` applies to each element of a list. */
export type JsonRules = { readonly items?: JsonSchema; readonly [keyword: string]: unknown };

/** Overrides by "Message.field" (the message's short name). */
export type JsonOverrides = Readonly<Record<string, JsonOverride>>;

type Json = Record<string, unknown>;
type Fields = Record<string, unknown>;

export function isoOrNull(ts: Timestamp | undefined): string | null {
  return ts ? timestampDate(ts).toISOString() : null;
}

/** A message that is only `repeated <T> values`: the proto's nullable list. */
export function listOf(message: DescMessage): DescField | undefined {
  const [only, ...rest] = message.fields;
  return only && rest.length === 0 && only.name === "values" && only.fieldKind === "list"
    ? only
    : undefined;
}

function scalarType(scalar: ScalarType, what: string): FieldType {
  switch (scalar) {
    case ScalarType.STRING:
      return "string";
    case ScalarType.BOOL:
      return "boolean";
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return "number";
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return "int32";
    default:
      // 64-bit integers and bytes have no JSON shape in this API yet: decide one before using them.
      throw new Error(`${what}: no API JSON shape for scalar type ${ScalarType[scalar]}`);
  }
}

/** The JSON type of a field (what checkFields checks). */
export function jsonType(f: DescField): FieldType {
  const what = `${f.parent.name}.${f.name}`;
  switch (f.fieldKind) {
    case "scalar":
      return scalarType(f.scalar, what);
    case "enum":
      return "string";
    case "list":
      return "array";
    case "message":
      if (listOf(f.message)) return "array";
      if (f.message.typeName === TimestampSchema.typeName) return "string";
      return "object";
    case "map":
      throw new Error(`${what}: no API JSON shape for a map`);
  }
}

/** The element type of a list field, or of a wrapper list's values. */
function elementType(f: DescField & { fieldKind: "list" }): FieldType {
  if (f.listKind === "scalar") return scalarType(f.scalar, `${f.parent.name}.${f.name}`);
  return f.listKind === "enum" ? "string" : "object";
}

/** The list a field holds: itself if repeated, a wrapper list's values, or none. */
function listField(f: DescField): (DescField & { fieldKind: "list" }) | undefined {
  if (f.fieldKind === "list") return f;
  const list = f.fieldKind === "message" ? listOf(f.message) : undefined;
  return list?.fieldKind === "list" ? list : undefined;
}

/** An enum's API names as a JSON Schema rule (none for other fields). */
function enumRule(f: DescField): JsonSchema {
  if (f.fieldKind === "enum") return { enum: apiEnumOf(f.enum).names };
  if (f.fieldKind === "list" && f.listKind === "enum") return { enum: apiEnumOf(f.enum).names };
  return {};
}

export class ProtoJson {
  constructor(private readonly overrides: JsonOverrides) {
    for (const key of Object.keys(overrides)) {
      if (!/^\w+\.\w+$/.test(key)) throw new Error(`override ${key} is not "Message.field"`);
    }
  }

  /** Each field's override, looked up once: write() runs on every management answer. */
  private readonly byField = new WeakMap<DescField, JsonOverride>();

  private override(f: DescField): JsonOverride {
    let o = this.byField.get(f);
    if (!o) {
      o = this.overrides[`${f.parent.name}.${f.name}`] ?? {};
      this.byField.set(f, o);
    }
    return o;
  }

  private readonly specs = new Map<string, Spec>();

  /** The checkFields table of a message as input: every field, by its JSON type. */
  spec(message: DescMessage): Spec {
    let spec = this.specs.get(message.typeName);
    if (!spec) {
      spec = {};
      for (const f of message.fields) {
        spec[f.name] = { type: jsonType(f), nullable: !this.override(f).nonNull };
      }
      this.specs.set(message.typeName, spec);
    }
    return spec;
  }

  /**
   * The message's input schema for the OpenAPI document: the spec (types, null), each
   * field's value rules (its enum's names, its override's rules), list elements spelled out.
   * `required` adds the fields an operation requires (a create's name) to the overrides' own.
   */
  schema(message: DescMessage, required: readonly string[] = []): JsonSchema {
    const refine: Record<string, JsonSchema> = {};
    const needed: string[] = [];
    for (const f of message.fields) {
      const o = this.override(f);
      if (o.required) needed.push(f.name);
      const { items, ...rules } = o.rules ?? {};
      const format = o.format ? { format: o.format } : {};
      const list = listField(f);
      refine[f.name] = list
        ? { type: "array", items: { ...this.elementSchema(list), ...items }, ...rules }
        : { ...fieldSchema({ type: jsonType(f) }), ...enumRule(f), ...format, ...rules };
    }
    return specSchema(this.spec(message), { required: [...needed, ...required], refine });
  }

  private elementSchema(list: DescField & { fieldKind: "list" }): JsonSchema {
    if (list.listKind === "message") return this.schema(list.message);
    return { ...fieldSchema({ type: elementType(list) }), ...enumRule(list) };
  }

  /**
   * A JSON object -> the message: unknown fields and wrong types are refused
   * (naming the field, prefixed by `at`); null or absent leaves a field unset.
   */
  read<T extends Message>(message: DescMessage, body: Json, at = ""): T {
    checkFields(body, this.spec(message), at && `${at}.`);
    return this.readChecked(message, body, at) as T;
  }

  private readChecked(message: DescMessage, body: Json, at: string): Message {
    const init: Fields = {};
    for (const f of message.fields) {
      const v = Object.hasOwn(body, f.name) ? body[f.name] : undefined;
      if (v === null || v === undefined || this.override(f).ignoredOnInput) continue;
      init[f.localName] = this.readValue(f, v, `${at && `${at}.`}${f.name}`);
    }
    return create(message, init as never);
  }

  private readValue(f: DescField, v: unknown, at: string): unknown {
    switch (f.fieldKind) {
      case "enum":
        return apiEnumOf(f.enum).parse(v as string, at);
      case "list":
        return this.readList(f, v as unknown[], at);
      case "message": {
        const list = listOf(f.message);
        if (list?.fieldKind === "list") {
          return create(f.message, { values: this.readList(list, v as unknown[], at) });
        }
        return this.read(f.message, v as Json, at);
      }
      default:
        return v;
    }
  }

  private readList(f: DescField & { fieldKind: "list" }, values: unknown[], at: string): unknown[] {
    checkElements(at, values, elementType(f));
    switch (f.listKind) {
      case "enum": {
        const e = apiEnumOf(f.enum);
        return values.map((v, i) => e.parse(v as string, `${at}[${i}]`));
      }
      case "message": {
        // Every element's fields are checked before any value is: a wrong key is named first.
        const spec = this.spec(f.message);
        values.forEach((v, i) => {
          checkFields(v as Json, spec, `${at}[${i}].`);
        });
        return values.map((v, i) => this.readChecked(f.message, v as Json, `${at}[${i}]`));
      }
      default:
        return values;
    }
  }

  /**
   * The message -> JSON, for the fields given (all of them by default), in that order.
   * `nullBefore` names keys written as null just before a field (a deprecated alias
   * before the first field it fills): one pass, one object, on every management answer.
   */
  write(
    message: Message,
    fields: readonly DescField[],
    nullBefore?: ReadonlyMap<string, string>,
  ): Json {
    const out: Json = {};
    for (const f of fields) {
      const alias = nullBefore?.get(f.name);
      if (alias !== undefined) out[alias] = null;
      const o = this.override(f).output;
      if (o === "never" || (o === "omit-unset" && !isFieldSet(message, f))) continue;
      const v = this.writeValue(f, (message as unknown as Fields)[f.localName]);
      out[f.name] = o === "empty-as-null" && v === "" ? null : v;
    }
    return out;
  }

  private writeValue(f: DescField, v: unknown): unknown {
    if (v === undefined) return null;
    switch (f.fieldKind) {
      case "enum":
        return apiEnumOf(f.enum).name(v as number);
      case "list":
        return (v as unknown[]).map((e) => this.writeElement(f, e));
      case "message": {
        const list = listOf(f.message);
        if (list?.fieldKind === "list") {
          return ((v as Fields).values as unknown[]).map((e) => this.writeElement(list, e));
        }
        if (f.message.typeName === TimestampSchema.typeName) return isoOrNull(v as Timestamp);
        return this.write(v as Message, f.message.fields);
      }
      default:
        jsonType(f); // a scalar this API has no shape for is refused, not passed through
        return v;
    }
  }

  private writeElement(f: DescField & { fieldKind: "list" }, e: unknown): unknown {
    if (f.listKind === "enum") return apiEnumOf(f.enum).name(e as number);
    if (f.listKind === "message") return this.write(e as Message, f.message.fields);
    return e;
  }

  /**
   * The JSON Schema of what write(message, fields) gives, field by field as writeValue
   * writes it: every key present (but an omit-unset field's), null where the writer can
   * write null, enums by their names, timestamps as date-time. No value rules: those are
   * the input's; a stored value is not re-checked against today's limits.
   */
  outputSchema(message: DescMessage, fields: readonly DescField[] = message.fields): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const f of fields) {
      const o = this.override(f).output;
      if (o === "never") continue;
      const schema = this.outputValueSchema(f);
      properties[f.name] = o === "empty-as-null" ? orNull(schema) : schema;
      if (o !== "omit-unset") required.push(f.name);
    }
    return { type: "object", required, properties, additionalProperties: false };
  }

  private outputValueSchema(f: DescField): JsonSchema {
    const o = this.override(f);
    switch (f.fieldKind) {
      case "enum":
        // The zero value is written as null. An omit-unset enum without explicit presence is
        // written only when non-zero, so by its name (an unknown number would be null, and the
        // service stores none: validation.ts).
        return o.output === "omit-unset" && f.presence !== FeatureSet_FieldPresence.EXPLICIT
          ? enumRule(f)
          : orNull(enumRule(f));
      case "list":
        return arrayOf(this.outputElementSchema(f));
      case "message": {
        // An unset message field is undefined, which writeValue writes as null.
        const list = listOf(f.message);
        if (list?.fieldKind === "list") return orNull(arrayOf(this.outputElementSchema(list)));
        if (f.message.typeName === TimestampSchema.typeName) return orNull(DATE_TIME);
        return orNull(this.outputSchema(f.message));
      }
      default: {
        const schema = {
          ...fieldSchema({ type: jsonType(f) }),
          ...(o.format && { format: o.format }),
        };
        // With explicit presence (proto3 `optional`) an unset scalar is undefined: null.
        return f.presence === FeatureSet_FieldPresence.EXPLICIT ? orNull(schema) : schema;
      }
    }
  }

  private outputElementSchema(f: DescField & { fieldKind: "list" }): JsonSchema {
    if (f.listKind === "message") return this.outputSchema(f.message);
    // An enum element is written by its name, null for the zero value.
    if (f.listKind === "enum") return orNull(enumRule(f));
    return fieldSchema({ type: elementType(f) });
  }
}
