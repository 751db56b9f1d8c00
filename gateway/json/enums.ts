import type { DescEnum } from "@bufbuild/protobuf";
import { quote } from "../../platform/quote.js";
import { badRequest } from "./fields.js";

export interface ApiEnum {
  /** The value an API name stands for; `at` names the field in the error. */
  parse(value: string, at: string): number;
  /** The API name of a value; null for the zero (unspecified) value and unknown values. */
  name(value: number): string | null;
  /** The API names, in proto order: for error messages and the OpenAPI document. */
  readonly names: readonly string[];
}

/**
 * The API's names of an enum's values are the proto names without the enum's
 * prefix, in lowercase (REGION_EUROPE is "europe", SCAN_SCOPE_USER_ONLY is
 * "user_only"); the zero value is "unspecified", which the API writes as null.
 */
function apiEnum(desc: DescEnum): ApiEnum {
  const prefix = desc.sharedPrefix ?? "";
  const pairs = desc.values
    .filter((v) => v.number !== 0)
    .map((v): [string, number] => [v.name.slice(prefix.length).toLowerCase(), v.number]);
  const byName = new Map(pairs);
  const byValue = new Map(pairs.map(([k, v]) => [v, k]));
  const names = pairs.map(([k]) => k);
  const listed = names.map((k) => `"${k}"`).join(", ");
  return {
    parse(value, at) {
      const v = byName.get(value);
      if (v === undefined) throw badRequest(`${at} must be one of ${listed}, got ${quote(value)}`);
      return v;
    },
    name: (value) => byValue.get(value) ?? null,
    names,
  };
}

const byType = new Map<string, ApiEnum>();

/** The API names of a proto enum (derived once per enum). */
export function apiEnumOf(desc: DescEnum): ApiEnum {
  let e = byType.get(desc.typeName);
  if (!e) {
    e = apiEnum(desc);
    byType.set(desc.typeName, e);
  }
  return e;
}
