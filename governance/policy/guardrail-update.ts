import { clone, create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { builtinEntry, SCOPED_BUILTIN } from "../../domain/builtin-filters.js";
import { GUARDRAIL_FIELDS, type GuardrailField } from "../../domain/guardrail-fields.js";
import {
  BuiltinFilterListSchema,
  type Guardrail,
  type GuardrailInput,
  GuardrailSchema,
  ScanScope,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { copyMaskedField } from "../../platform/rpc/update-mask.js";

/*
 * A guardrail update applied to a guardrail: what UpdateGuardrail stores, and what a shadow
 * decides by (the live guardrail with the shadow's change applied), so both read one rule.
 */

export type Fields = Record<string, unknown>;

/**
 * Copies a field from the input onto a guardrail, with the null of every
 * update (platform/rpc/update-mask.ts): a nullable field becomes unset, any other
 * its zero value.
 */
export function copyField(to: Guardrail, f: GuardrailField, input: GuardrailInput): void {
  if (f.input) copyMaskedField(to, f.field, input, f.input);
}

/**
 * A deprecated alias fills each of its fields that the request did not set
 * explicitly (`named` says which fields the request names; a named field
 * sent as null was not set explicitly either).
 */
export function fillFromAliases(
  to: Guardrail,
  input: GuardrailInput,
  named: (path: string) => boolean,
) {
  const values = input as unknown as Fields;
  for (const alias of GUARDRAIL_FIELDS.aliases) {
    const value = values[alias.input.localName];
    if (!named(alias.name) || value === undefined) continue;
    for (const f of alias.fills) {
      if (!named(f.name) || (f.input && values[f.input.localName] === undefined)) {
        (to as unknown as Fields)[f.field.localName] = value;
      }
    }
  }
}

/**
 * Builtin labels are fixed per slug: whatever a client sent is replaced. The
 * scoped builtin's scan_scope defaults to all_messages, stored as such. An
 * empty filter list means "no filters", as null does: it is stored as null,
 * so "none" has one representation.
 */
export function withFilterDefaults(g: Guardrail): Guardrail {
  if (g.contentFilters?.values.length === 0) g.contentFilters = undefined;
  if (g.contentFilterBuiltins?.values.length === 0) g.contentFilterBuiltins = undefined;
  if (g.checks?.values.length === 0) g.checks = undefined;
  if (g.contentFilterBuiltins) {
    g.contentFilterBuiltins = create(BuiltinFilterListSchema, {
      values: g.contentFilterBuiltins.values.map((b) => ({
        ...b,
        label: builtinEntry(b.slug)?.label ?? "",
        scanScope:
          b.slug === SCOPED_BUILTIN && b.scanScope === ScanScope.UNSPECIFIED
            ? ScanScope.ALL_MESSAGES
            : b.scanScope,
      })),
    });
  }
  return g;
}

/**
 * Applies the fields named in `paths` (snake_case JSON names) from `input`
 * onto a copy of `current`. A path whose value is unset in `input` means the
 * client sent null: lists and nullable fields become null, booleans take
 * their default. Paths not named are left exactly as they were. The request
 * rules (request-rules.ts) have already refused unknown paths, a null name
 * and fields set outside the mask.
 */
export function applyUpdateMask(
  current: Guardrail,
  input: GuardrailInput,
  paths: readonly string[],
  now: Timestamp,
): Guardrail {
  const next = clone(GuardrailSchema, current);
  const named = new Set(paths);
  for (const f of GUARDRAIL_FIELDS.fields) {
    if (f.role === "writable" && named.has(f.name)) copyField(next, f, input);
  }
  fillFromAliases(next, input, (path) => named.has(path));
  next.updatedAt = now;
  return withFilterDefaults(next);
}
