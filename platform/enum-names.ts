import type { DescEnum } from "@bufbuild/protobuf";

/**
 * The API name of a proto enum's values: the value's name without the enum's prefix, in lower
 * case (RESET_INTERVAL_DAILY is "daily", FILTER_ACTION_BLOCK is "block"); UNSPECIFIED has none.
 * Derived from the generated enum, so a value added to the proto is a name everywhere.
 */
export type EnumApiName<E> = Lowercase<Exclude<keyof E, "UNSPECIFIED"> & string>;

/** Both directions between a proto enum and its API names, built once from its descriptor. */
export interface EnumNames<N extends string, V extends number> {
  /** Every name, in the proto's order. */
  readonly names: readonly N[];
  is(s: unknown): s is N;
  /** The name of a value; undefined for UNSPECIFIED, undefined, and numbers no value has. */
  name(value: V | undefined): N | undefined;
  value(name: N): V;
  /** `"daily", "weekly", "monthly"`: the names quoted, as error messages list them. */
  readonly quoted: string;
}

export function enumNames<E extends Record<string, string | number>>(
  desc: DescEnum,
): EnumNames<EnumApiName<E>, Extract<E[keyof E], number>> {
  type N = EnumApiName<E>;
  type V = Extract<E[keyof E], number>;
  const pairs = desc.values
    .filter((v) => v.number !== 0)
    .map((v): [N, V] => [v.localName.toLowerCase() as N, v.number as V]);
  const byName = new Map<string, V>(pairs);
  const byValue = new Map<number, N>(pairs.map(([n, v]) => [v, n]));
  const names = pairs.map(([n]) => n);
  return {
    names,
    is: (s): s is N => typeof s === "string" && byName.has(s),
    name: (value) => (value === undefined ? undefined : byValue.get(value)),
    value: (name) => byName.get(name) as V,
    quoted: names.map((n) => `"${n}"`).join(", "),
  };
}

const byType = new Map<string, EnumNames<string, number>>();

/**
 * The API names of any enum, for code that meets enums through descriptors (the guardrail JSON,
 * the audit log): the same derivation, built once per enum.
 */
export function enumNamesOf(desc: DescEnum): EnumNames<string, number> {
  let names = byType.get(desc.typeName);
  if (!names) {
    names = enumNames<Record<string, number>>(desc);
    byType.set(desc.typeName, names);
  }
  return names;
}
