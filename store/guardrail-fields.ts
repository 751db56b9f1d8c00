import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { type Guardrail, GuardrailSchema } from "../gen/railgate/guardrail/v1/guardrail_pb.js";

/**
 * A guardrail is stored field by field: one entry per top-level field, each
 * the protobuf encoding of a Guardrail holding that field alone. Protobuf
 * concatenation merges messages, and no field appears twice, so the
 * concatenation of all entries (in any order) decodes to the whole guardrail,
 * while a PATCH overwrites only the entries it names (see PATCH_GUARDRAIL).
 * An unset or default field has an empty encoding and no entry.
 */

/** The version lives beside the fields (the store bumps it), never inside them. */
export const VERSION_FIELD = GuardrailSchema.field.version.number;

/** The fields stored one entry each: every field of the proto but the version. */
export const STORED_FIELDS = GuardrailSchema.fields.filter((f) => f.number !== VERSION_FIELD);

const byName = new Map(STORED_FIELDS.map((f) => [f.name, f]));
const byNumber = new Map(STORED_FIELDS.map((f) => [f.number, f]));

/** The field number of a stored guardrail field by its proto (snake_case) name. */
export function guardrailFieldNumber(name: string): number {
  const f = byName.get(name);
  if (!f) throw new Error(`not a stored guardrail field: ${name}`);
  return f.number;
}

/** The encoding of one field of `g` alone; empty when the field is unset. */
export function encodeField(g: Guardrail, number: number): Uint8Array {
  const field = byNumber.get(number);
  if (!field) throw new Error(`not a stored guardrail field: ${number}`);
  const part = create(GuardrailSchema) as unknown as Record<string, unknown>;
  part[field.localName] = (g as unknown as Record<string, unknown>)[field.localName];
  // Unknown fields a client smuggled into a nested message are never stored.
  return toBinary(GuardrailSchema, part as unknown as Guardrail, { writeUnknownFields: false });
}

/** Every stored field of `g` that is set, as [number, encoding]. */
export function encodeFields(g: Guardrail): [number, Uint8Array][] {
  return STORED_FIELDS.map((f): [number, Uint8Array] => [
    f.number,
    encodeField(g, f.number),
  ]).filter(([, bytes]) => bytes.length > 0);
}

/** The guardrail whose field encodings these are. */
export function decodeFields(parts: Iterable<Uint8Array>, version: number): Guardrail {
  const list = [...parts];
  const whole = new Uint8Array(list.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of list) {
    whole.set(p, at);
    at += p.length;
  }
  const g = fromBinary(GuardrailSchema, whole);
  g.version = BigInt(version);
  return g;
}
