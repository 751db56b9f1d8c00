import {
  create,
  type DescField,
  type DescMessage,
  isFieldSet,
  type Message,
  ScalarType,
} from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema, timestampDate } from "@bufbuild/protobuf/wkt";
import { fieldSchema, type JsonSchema, specSchema } from "../openapi/spec-schema.js";
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
 * so for that one field; there is no second list of fields.
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
  /** Output: left out when unset, or null when empty, instead of the plain value. */
  readonly output?: "omit-unset" | "empty-as-null";
}

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

export class ProtoJson {
  constructor(private readonly overrides: JsonOverrides) {
    for (const key of Object.keys(overrides)) {
      if (!/^\w+\.\w+$/.test(key)) throw new Error(`override ${key} is not "Message.field"`);
    }
  }

  private override(f: DescField): JsonOverride {
    return this.overrides[`${f.parent.name}.${f.name}`] ?? {};
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

  /** The message's input schema for the OpenAPI document: the spec, with list elements spelled out. */
  schema(message: DescMessage, required: readonly string[] = []): JsonSchema {
    const refine: Record<string, JsonSchema> = {};
    for (const f of message.fields) {
      const list =
        f.fieldKind === "message" ? listOf(f.message) : f.fieldKind === "list" ? f : undefined;
      if (list?.fieldKind !== "list") continue;
      refine[f.name] = {
        type: "array",
        items:
          list.listKind === "message"
            ? this.schema(list.message)
            : fieldSchema({ type: elementType(list) }),
      };
    }
    return specSchema(this.spec(message), { required, refine });
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

  /** The message -> JSON, for the fields given (all of them by default), in that order. */
  write(message: Message, fields: readonly DescField[]): Json {
    const out: Json = {};
    for (const f of fields) {
      const o = this.override(f).output;
      if (o === "omit-unset" && !isFieldSet(message, f)) continue;
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
}
