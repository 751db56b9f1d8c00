import {
  clearField,
  type DescField,
  type DescMessage,
  isFieldSet,
  type MessageShape,
} from "@bufbuild/protobuf";
import { fail } from "./request-rules.js";

/**
 * An update names what it changes in update_mask, a field named but unset
 * being the client's null. An empty mask would change nothing but updated_at,
 * and a field set outside the mask would be silently dropped: both are
 * refused, so a plain gRPC client gets the answer an HTTP client gets. An
 * update RPC states its mask in an UpdateMaskRules beside its other request
 * rules (services/<name>/request-rules.ts), which walk it with walkUpdateMask;
 * the handler then copies what the mask names with copyMaskedFields (a
 * guardrail through its field table, with copyMaskedField; a webhook, whose
 * stored row is no message, path by path in its service).
 */
export interface UpdateMaskRules<D extends DescMessage> {
  /** The message that carries the new values: the request itself, or the input it nests. */
  readonly values: D;
  /** Fields of `values` that are no value: which record to change, and the mask itself. */
  readonly identity?: readonly string[];
  /** How refusals name a field of `values`: "guardrail." for a nested input, none for the request's own. */
  readonly prefix?: string;
  /** What the empty mask's refusal asks for; by default "one of <the updatable paths>". */
  readonly emptyHint?: string;
  /**
   * Every path the mask may name, in the order the API lists them, with the
   * rule its value must pass (unset is the client's null).
   */
  readonly paths: Readonly<Record<string, (values: MessageShape<D>) => void>>;
  /** The refusal of a path the mask may not name. */
  readonly notUpdatable: (path: string) => string;
}

function refuseEmpty(paths: readonly string[], hint: string): void {
  if (paths.length === 0) {
    fail(`Update is empty: send at least ${hint} (update_mask must name at least 1 field)`);
  }
}

function refuseSetOutside<D extends DescMessage>(
  schema: D,
  values: MessageShape<D>,
  paths: readonly string[],
  identity: readonly string[],
  prefix = "",
): void {
  for (const field of schema.fields) {
    if (
      !identity.includes(field.name) &&
      isFieldSet(values, field) &&
      !paths.includes(field.name)
    ) {
      fail(
        `${prefix}${field.name} is set but update_mask does not name it: add "${field.name}" to update_mask, or leave the field unset`,
      );
    }
  }
}

/**
 * An update request's mask against its rules, in this order: the mask names
 * something, every path is updatable, no value is set outside the mask, then
 * each named value's rule in the mask's order.
 */
export function walkUpdateMask<D extends DescMessage>(
  rules: UpdateMaskRules<D>,
  values: MessageShape<D>,
  paths: readonly string[],
): void {
  const updatable = Object.keys(rules.paths);
  refuseEmpty(paths, rules.emptyHint ?? `one of ${updatable.join(", ")}`);
  for (const path of paths) {
    if (!Object.hasOwn(rules.paths, path)) fail(rules.notUpdatable(path));
  }
  refuseSetOutside(rules.values, values, paths, rules.identity ?? [], rules.prefix);
  for (const path of paths) rules.paths[path]?.(values);
}

/**
 * Copies one value a mask names onto the record: unset in `from` is the
 * client's null, so a field with presence becomes unset and any other takes
 * its zero value.
 */
export function copyMaskedField(
  to: object,
  toField: DescField,
  from: object,
  fromField: DescField,
): void {
  const value = (from as Record<string, unknown>)[fromField.localName];
  if (value === undefined) clearField(to as MessageShape<DescMessage>, toField);
  else (to as Record<string, unknown>)[toField.localName] = value;
}

/**
 * Applies the paths of an update (checked by walkUpdateMask) from `from` to
 * the record `to`, field by field of the same proto name; paths not named
 * stay exactly as they were.
 */
export function copyMaskedFields<T extends DescMessage, F extends DescMessage>(
  toSchema: T,
  to: MessageShape<T>,
  fromSchema: F,
  from: MessageShape<F>,
  paths: readonly string[],
): void {
  for (const path of paths) {
    const toField = toSchema.fields.find((f) => f.name === path);
    const fromField = fromSchema.fields.find((f) => f.name === path);
    if (!toField || !fromField) {
      throw new Error(`${path} is not a field of both ${fromSchema.name} and ${toSchema.name}`);
    }
    copyMaskedField(to, toField, from, fromField);
  }
}
