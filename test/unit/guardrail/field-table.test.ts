import {
  clone,
  create,
  createFileRegistry,
  type DescField,
  type DescMessage,
  equals,
  ScalarType,
} from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldDescriptorProtoSchema,
  FileDescriptorProtoSchema,
  TimestampSchema,
} from "@bufbuild/protobuf/wkt";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { expect } from "chai";
import {
  GUARDRAIL_FIELD_DECISIONS,
  GUARDRAIL_FIELDS,
  guardrailFieldTable,
} from "../../../domain/guardrail-fields.js";
import { apiEnumOf } from "../../../gateway/json/enums.js";
import {
  GUARDRAIL_JSON_OVERRIDES,
  GUARDRAIL_JSON_SCHEMA,
  guardrailBodySchema,
  guardrailInputFromJson,
  guardrailToJson,
} from "../../../gateway/json/guardrail-json.js";
import { listOf } from "../../../gateway/json/proto-json.js";
import {
  type Guardrail,
  GuardrailInputSchema,
  GuardrailSchema,
} from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { nowTimestamp } from "../../../platform/time.js";
import {
  applyUpdateMask,
  fieldsWritten,
  guardrailFromInput,
  UPDATABLE_PATHS,
} from "../../../services/guardrail/update-mask.js";
import { decodeFields, encodeFields, STORED_FIELDS } from "../../../store/guardrail-fields.js";

/**
 * Every field of the proto's Guardrail is decided: mapped in the JSON (both
 * ways if writable), in the update mask and in the store, or internal. The
 * samples below are built from the descriptor too, so a new field is covered
 * without editing this test, and a kind of field nobody has mapped yet fails
 * here, by name.
 */

const now = nowTimestamp();

function unsampled(f: DescField): never {
  throw new Error(`no sample for ${f.parent.name}.${f.name}: map its kind, then sample it here`);
}

function sampleScalar(f: DescField, scalar: ScalarType): unknown {
  if (scalar === ScalarType.STRING) return "sample";
  if (scalar === ScalarType.BOOL) return true;
  if (scalar === ScalarType.DOUBLE) return 1.5;
  if (scalar === ScalarType.BYTES) return new Uint8Array([1]);
  return unsampled(f);
}

/** A non-default JSON value for an input field, as a client would send it. */
function sampleJson(f: DescField): unknown {
  if (f.fieldKind === "enum") return apiEnumOf(f.enum).names[0];
  if (f.fieldKind === "scalar") return sampleScalar(f, f.scalar);
  const list = f.fieldKind === "message" ? listOf(f.message) : undefined;
  if (f.fieldKind === "message" && list === undefined) {
    if (f.message.typeName === TimestampSchema.typeName) return "2023-11-14T22:13:20.000Z";
    return sampleObject(f.message);
  }
  if (list?.fieldKind !== "list") return unsampled(f);
  if (list.listKind === "scalar") return [sampleScalar(list, list.scalar)];
  if (list.listKind === "enum") return [apiEnumOf(list.enum).names[0]];
  return [sampleObject(list.message)];
}

function sampleObject(message: DescMessage): Record<string, unknown> {
  return Object.fromEntries(
    message.fields
      .filter((f) => !GUARDRAIL_JSON_OVERRIDES[`${message.name}.${f.name}`]?.ignoredOnInput)
      .map((f) => [f.name, sampleJson(f)]),
  );
}

/** `actual` has every key of `sent` with its value (the service may add some, say a builtin's label). */
function expectEcho(actual: unknown, sent: unknown, at: string): void {
  if (Array.isArray(sent)) {
    expect(actual, at).to.be.an("array").with.length(sent.length);
    sent.forEach((s, i) => {
      expectEcho((actual as unknown[])[i], s, `${at}[${i}]`);
    });
  } else if (sent !== null && typeof sent === "object") {
    for (const [k, v] of Object.entries(sent)) {
      expectEcho((actual as Record<string, unknown>)[k], v, `${at}.${k}`);
    }
  } else {
    expect(actual, at).to.equal(sent);
  }
}

/** A message with every field set to a non-default value (a read-only one: no JSON to read). */
function sampleMessage(message: DescMessage): unknown {
  const m = create(message) as unknown as Record<string, unknown>;
  for (const f of message.fields) {
    if (f.fieldKind === "scalar") m[f.localName] = sampleScalar(f, f.scalar);
    else if (f.fieldKind === "enum") m[f.localName] = 1;
    else if (f.fieldKind === "list" && f.listKind === "message")
      m[f.localName] = [sampleMessage(f.message)];
    else if (f.fieldKind === "list" && f.listKind === "scalar")
      m[f.localName] = [sampleScalar(f, f.scalar)];
    else if (f.fieldKind === "list" && f.listKind === "enum") m[f.localName] = [1];
    else if (f.fieldKind === "message" && f.message.typeName === TimestampSchema.typeName)
      m[f.localName] = create(TimestampSchema, { seconds: 1_700_000_000n });
    else if (f.fieldKind === "message") m[f.localName] = sampleMessage(f.message);
    else unsampled(f);
  }
  return m;
}

/** A guardrail with every field set to a non-default value, straight from the descriptor. */
function everyFieldSet(): Guardrail {
  const g = create(GuardrailSchema) as unknown as Record<string, unknown>;
  for (const f of GuardrailSchema.fields) {
    if (f.fieldKind === "scalar") {
      const byScalar: Partial<Record<ScalarType, unknown>> = {
        [ScalarType.STRING]: "sample",
        [ScalarType.BOOL]: true,
        [ScalarType.DOUBLE]: 1.5,
        [ScalarType.INT64]: 7n,
      };
      g[f.localName] = byScalar[f.scalar] ?? unsampled(f);
    } else if (f.fieldKind === "enum") {
      g[f.localName] = 1;
    } else if (f.fieldKind === "message" && f.message.typeName === TimestampSchema.typeName) {
      g[f.localName] = create(TimestampSchema, { seconds: 1_700_000_000n });
    } else if (f.fieldKind === "message" && listOf(f.message)) {
      // The JSON sample read through the gateway: a list with one element, every field set.
      g[f.localName] = guardrailInputFromJson({ [f.name]: sampleJson(f) }).input[
        f.localName as keyof typeof GuardrailInputSchema.field
      ];
    } else if (f.fieldKind === "message") {
      g[f.localName] = sampleMessage(f.message);
    } else {
      unsampled(f);
    }
  }
  return g as unknown as Guardrail;
}

/**
 * A guardrail at its zero values but for its lists, each holding one element at its zero
 * values: what the writer writes as null (enums, optional fields, timestamps) or leaves out
 * (an unset scan scope).
 */
function zeroElements(): Guardrail {
  const g = create(GuardrailSchema) as unknown as Record<string, unknown>;
  for (const f of GuardrailSchema.fields) {
    const list = f.fieldKind === "message" ? listOf(f.message) : undefined;
    if (f.fieldKind !== "message" || list?.fieldKind !== "list") continue;
    const zero =
      list.listKind === "message"
        ? create(list.message)
        : list.listKind === "enum"
          ? 0
          : sampleScalar(list, list.scalar);
    g[f.localName] = create(f.message, { values: [zero] } as never);
  }
  return g as unknown as Guardrail;
}

// ajv-formats is CommonJS: under nodenext its default export is the module object.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

describe("guardrail fields: one list, the proto's", () => {
  const roles = new Map(GUARDRAIL_FIELDS.fields.map((f) => [f.name, f.role]));
  const aliases = GUARDRAIL_FIELDS.aliases.map((a) => a.name);
  const bodyFields = Object.keys(
    (guardrailBodySchema([]) as { properties: Record<string, unknown> }).properties,
  );

  it("decides every field of Guardrail, and only version is internal", () => {
    expect(GuardrailSchema.fields.map((f) => roles.get(f.name))).to.not.include(undefined);
    expect([...roles].filter(([, r]) => r === "internal").map(([n]) => n)).to.deep.equal([
      "version",
    ]);
  });

  it("refuses a Guardrail field that is neither input nor decided, naming it", () => {
    const file = clone(FileDescriptorProtoSchema, GuardrailSchema.file.proto);
    const message = file.messageType.find((m) => m.name === GuardrailSchema.name);
    message?.field.push(
      create(FieldDescriptorProtoSchema, {
        name: "owner_note",
        jsonName: "ownerNote",
        number: 99,
        type: FieldDescriptorProto_Type.STRING,
        label: FieldDescriptorProto_Label.OPTIONAL,
      }),
    );
    const registry = createFileRegistry(file, (name) =>
      GuardrailSchema.file.dependencies.find((d) => d.proto.name === name),
    );
    const widened = registry.getMessage(GuardrailSchema.typeName);
    const input = registry.getMessage(GuardrailInputSchema.typeName);
    if (!widened || !input) throw new Error("the widened file lost its messages");
    expect(() => guardrailFieldTable(widened, input)).to.throw(/Guardrail\.owner_note is neither/);
    // Decided, it is in the table with that role.
    const decided = guardrailFieldTable(widened, input, {
      ...GUARDRAIL_FIELD_DECISIONS,
      owner_note: "read-only",
    });
    expect(decided.fields.find((f) => f.name === "owner_note")?.role).to.equal("read-only");
  });

  it("takes every GuardrailInput field as a JSON body field, and nothing else", () => {
    expect(bodyFields).to.have.members(GuardrailInputSchema.fields.map((f) => f.name));
  });

  it("writes every non-internal field and each alias (as null) in the JSON, and nothing else", () => {
    const out = guardrailToJson(everyFieldSet());
    const visible = GUARDRAIL_FIELDS.fields.filter((f) => f.role !== "internal");
    expect(Object.keys(out)).to.have.members([...visible.map((f) => f.name), ...aliases]);
    for (const f of visible) expect(out[f.name], f.name).to.not.equal(null);
    for (const a of aliases) expect(out[a], a).to.equal(null);
  });

  it("lets an update mask name exactly the writable fields and the aliases", () => {
    const writable = GUARDRAIL_FIELDS.fields.filter((f) => f.role === "writable");
    expect([...UPDATABLE_PATHS]).to.have.members([...writable.map((f) => f.name), ...aliases]);
    for (const f of GUARDRAIL_FIELDS.fields.filter((f) => f.role === "create-only")) {
      expect(bodyFields, f.name).to.include(f.name);
    }
  });

  it("carries each writable field from JSON through the mask into the JSON output", () => {
    const base = guardrailFromInput(create(GuardrailInputSchema, { name: "b" }), "id", "ws", now);
    for (const f of GUARDRAIL_FIELDS.fields.filter((f) => f.role === "writable")) {
      const sent = sampleJson(f.field);
      const { input, paths } = guardrailInputFromJson({ [f.name]: sent });
      expect(paths).to.deep.equal([f.name]);
      const next = applyUpdateMask(base, input, paths, now);
      expectEcho(guardrailToJson(next)[f.name], sent, f.name);
      expect(fieldsWritten(input, paths), f.name).to.include(f.name);
      // Sent as null: back to the default (the base's: the field's zero value, or null).
      if (GUARDRAIL_JSON_OVERRIDES[`${GuardrailInputSchema.name}.${f.name}`]?.nonNull) {
        expect(() => guardrailInputFromJson({ [f.name]: null }), f.name).to.throw(/not null/);
        continue;
      }
      const cleared = applyUpdateMask(
        next,
        guardrailInputFromJson({ [f.name]: null }).input,
        paths,
        now,
      );
      expect(guardrailToJson(cleared)[f.name], `${f.name}: null`).to.deep.equal(
        guardrailToJson(base)[f.name],
      );
    }
  });

  it("stores every field but the internal ones, one entry each, and reads them back", () => {
    const g = everyFieldSet();
    const internal = GUARDRAIL_FIELDS.fields.filter((f) => f.role === "internal");
    expect(STORED_FIELDS.map((f) => f.name)).to.have.members(
      GUARDRAIL_FIELDS.fields.filter((f) => f.role !== "internal").map((f) => f.name),
    );
    const entries = encodeFields(g);
    expect(entries.map(([n]) => n)).to.have.members(STORED_FIELDS.map((f) => f.number));
    const back = decodeFields(
      entries.map(([, bytes]) => bytes),
      Number(g.version),
    );
    expect(equals(GuardrailSchema, back, g)).to.equal(true);
    expect(internal.map((f) => f.name)).to.deep.equal(["version"]);
  });

  it("names only existing fields in the JSON overrides", () => {
    const messages = new Map(GuardrailSchema.file.messages.map((m) => [m.name, m]));
    for (const key of Object.keys(GUARDRAIL_JSON_OVERRIDES)) {
      const [message, field] = key.split(".");
      expect(
        messages.get(message ?? "")?.fields.map((f) => f.name),
        key,
      ).to.include(field);
    }
  });

  describe("the answer's schema, derived from the descriptor", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(GUARDRAIL_JSON_SCHEMA);
    /** The service makes ids as UUIDs, which the schema says; the samples say "sample". */
    const UUID = "00000000-0000-4000-8000-000000000000";
    const withIds = (g: Guardrail): Guardrail => ({ ...g, id: UUID, workspaceId: UUID });
    const samples: [string, Guardrail][] = [
      ["every field set", everyFieldSet()],
      ["every field at its default", create(GuardrailSchema)],
      ["each list with one element at its zero values", zeroElements()],
    ];

    function problems(out: unknown): string {
      return validate(out) ? "" : ajv.errorsText(validate.errors);
    }

    for (const [what, g] of samples) {
      it(`describes what guardrailToJson writes: ${what}`, () => {
        const out = guardrailToJson(withIds(g));
        expect(problems(out), JSON.stringify(out)).to.equal("");
      });
    }

    it("is strict: a key missing or added, or a value of another shape, does not validate", () => {
      const fine = guardrailToJson(withIds(zeroElements()));
      expect(problems(fine)).to.equal("");
      const { name: _, ...missing } = fine;
      expect(problems(missing)).to.match(/name/);
      expect(problems({ ...fine, owner_note: "x" })).to.match(/additional/);
      expect(problems({ ...fine, id: "sample" })).to.match(/id/);
      expect(problems({ ...fine, reset_interval: 2 })).to.match(/reset_interval/);
      expect(problems({ ...fine, created_at: "yesterday" })).to.match(/created_at/);
      expect(problems({ ...fine, enforce_zdr: false })).to.match(/enforce_zdr/);
    });
  });
});
