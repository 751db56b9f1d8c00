import type { DescField, DescMessage } from "@bufbuild/protobuf";
import {
  GuardrailInputSchema,
  GuardrailSchema,
} from "../gen/railgate/guardrail/v1/guardrail_pb.js";

/**
 * The guardrail's fields, from the proto (the one list of them): the JSON
 * mapping (gateway/json/guardrail-json.ts), the update mask (services/guardrail/
 * update-mask.ts, request-rules.ts) and explain walk this table instead of naming
 * fields, so it lives here, below all three; the
 * field-wise store (store/guardrail-fields.ts, below services) keeps every
 * field but the version, which the field-table test checks against the
 * internal fields here. What the descriptors cannot say
 * is decided below, field by field; a Guardrail field that is neither in
 * GuardrailInput nor decided here stops the process at load (and fails the
 * field-table test), so a new proto field cannot go undecided.
 */

/**
 * writable: in GuardrailInput; create sets it, an update changes it (a mask path).
 * create-only: in GuardrailInput, but no update may change it.
 * read-only: the service sets it; in the JSON output and the store, never input.
 * internal: neither JSON nor mask (the store keeps it beside the fields).
 */
export type GuardrailFieldRole = "writable" | "create-only" | "read-only" | "internal";

/** The roles the descriptors cannot tell; every other Guardrail field with an input twin is writable. */
export const GUARDRAIL_FIELD_DECISIONS: Readonly<
  Record<string, Exclude<GuardrailFieldRole, "writable">>
> = {
  id: "read-only",
  // A guardrail stays in the workspace it was created in: assignments and defaults hang on it.
  workspace_id: "create-only",
  created_at: "read-only",
  updated_at: "read-only",
  is_workspace_default: "read-only",
  // The service writes it when the checks run (on a change, or on demand).
  last_check_run: "read-only",
  // Set by the shadow routes: a proposed change decided beside the live one.
  shadow: "read-only",
  // Bumped by the store on every write, for optimistic concurrency; not part of the API.
  version: "internal",
};

/**
 * GuardrailInput fields with no Guardrail twin: deprecated aliases, each
 * filling the stored fields named `<alias>_*` that a request leaves unset.
 */
const ALIASES: readonly string[] = ["enforce_zdr"];

export interface GuardrailField {
  /** The proto name: also the JSON key, the update-mask path and the store's field name. */
  readonly name: string;
  readonly role: GuardrailFieldRole;
  /** The field of Guardrail. */
  readonly field: DescField;
  /** Its twin in GuardrailInput (writable and create-only fields). */
  readonly input: DescField | undefined;
}

export interface GuardrailAlias {
  readonly name: string;
  readonly input: DescField;
  /** The stored fields it fills, in proto order. */
  readonly fills: readonly GuardrailField[];
}

export interface GuardrailFieldTable {
  readonly fields: readonly GuardrailField[];
  readonly aliases: readonly GuardrailAlias[];
  /** The paths an update mask may name: writable fields and aliases. */
  readonly updatablePaths: ReadonlySet<string>;
}

/** Same value type on both sides: an input value is stored as it is. */
function sameType(a: DescField, b: DescField): boolean {
  return (
    a.fieldKind === b.fieldKind &&
    a.scalar === b.scalar &&
    a.enum?.typeName === b.enum?.typeName &&
    a.message?.typeName === b.message?.typeName
  );
}

/**
 * Builds the table from a Guardrail and a GuardrailInput descriptor (a
 * parameter, so the test can show that an undecided field is refused).
 * Throws, naming the field, on anything not decided or not consistent.
 */
export function guardrailFieldTable(
  guardrail: DescMessage,
  input: DescMessage,
  decided: Readonly<
    Record<string, Exclude<GuardrailFieldRole, "writable">>
  > = GUARDRAIL_FIELD_DECISIONS,
  aliasNames: readonly string[] = ALIASES,
): GuardrailFieldTable {
  const inputs = new Map(input.fields.map((f) => [f.name, f]));
  const fields = guardrail.fields.map((field): GuardrailField => {
    const twin = inputs.get(field.name);
    const role: GuardrailFieldRole | undefined = Object.hasOwn(decided, field.name)
      ? decided[field.name]
      : twin && "writable";
    if (!role) {
      throw new Error(
        `${guardrail.name}.${field.name} is neither in ${input.name} nor decided in domain/guardrail-fields.ts (read-only, create-only or internal)`,
      );
    }
    const hasInput = role === "writable" || role === "create-only";
    if (hasInput && !twin) throw new Error(`${field.name} is ${role} but not in ${input.name}`);
    if (!hasInput && twin) throw new Error(`${field.name} is ${role} but in ${input.name}`);
    if (twin && !sameType(field, twin)) {
      throw new Error(
        `${input.name}.${field.name} and ${guardrail.name}.${field.name} differ in type`,
      );
    }
    return { name: field.name, role, field, input: hasInput ? twin : undefined };
  });
  for (const name of Object.keys(decided)) {
    if (!fields.some((f) => f.name === name)) {
      throw new Error(`guardrail-fields.ts decides ${name}, which ${guardrail.name} does not have`);
    }
  }
  const aliases = aliasNames.map((name): GuardrailAlias => {
    const aliasInput = inputs.get(name);
    const fills = fields.filter((f) => f.role === "writable" && f.name.startsWith(`${name}_`));
    if (!aliasInput || fills.length === 0) {
      throw new Error(`alias ${name} must be in ${input.name} and fill ${name}_* fields`);
    }
    if (fills.some((f) => !sameType(f.field, aliasInput))) {
      throw new Error(`alias ${name} and the fields it fills differ in type`);
    }
    return { name, input: aliasInput, fills };
  });
  for (const f of input.fields) {
    if (!fields.some((g) => g.input === f) && !aliasNames.includes(f.name)) {
      throw new Error(`${input.name}.${f.name} is neither a ${guardrail.name} field nor an alias`);
    }
  }
  const updatablePaths = new Set([
    ...fields.filter((f) => f.role === "writable").map((f) => f.name),
    ...aliases.map((a) => a.name),
  ]);
  return { fields, aliases, updatablePaths };
}

export const GUARDRAIL_FIELDS = guardrailFieldTable(GuardrailSchema, GuardrailInputSchema);
