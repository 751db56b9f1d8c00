import { create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { GUARDRAIL_FIELDS } from "../../domain/guardrail-fields.js";
import {
  type Guardrail,
  type GuardrailInput,
  GuardrailSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  copyField,
  type Fields,
  fillFromAliases,
  withFilterDefaults,
} from "../../governance/policy/guardrail-update.js";

export { applyUpdateMask } from "../../governance/policy/guardrail-update.js";

/** The paths an update mask may name (see domain/guardrail-fields.ts). */
export const UPDATABLE_PATHS: ReadonlySet<string> = GUARDRAIL_FIELDS.updatablePaths;

/**
 * The stored guardrail fields (proto names) that applyUpdateMask with these
 * paths writes: the store overwrites exactly these, and nothing else, so
 * PATCHes of different fields never touch each other's.
 */
export function fieldsWritten(input: GuardrailInput, paths: readonly string[]): string[] {
  const out = new Set<string>([GuardrailSchema.field.updatedAt.name]);
  for (const path of paths) {
    const alias = GUARDRAIL_FIELDS.aliases.find((a) => a.name === path);
    if (!alias) out.add(path);
    else if ((input as unknown as Fields)[alias.input.localName] !== undefined) {
      for (const f of alias.fills) if (!paths.includes(f.name)) out.add(f.name);
    }
  }
  return [...out];
}

/** A new guardrail from a create request; omitted fields take their defaults. */
export function guardrailFromInput(
  input: GuardrailInput,
  id: string,
  workspaceId: string,
  now: Timestamp,
): Guardrail {
  const g = create(GuardrailSchema);
  for (const f of GUARDRAIL_FIELDS.fields) copyField(g, f, input);
  // A create names every field: an alias fills whichever of its fields the request left unset.
  fillFromAliases(g, input, () => true);
  g.id = id;
  g.workspaceId = workspaceId;
  g.createdAt = now;
  return withFilterDefaults(g);
}
