import type { DescEnum } from "@bufbuild/protobuf";
import { enumNamesOf } from "../../platform/enum-names.js";
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

const byType = new Map<string, ApiEnum>();

/**
 * The API names of a proto enum (platform/enum-names.ts: REGION_EUROPE is "europe",
 * SCAN_SCOPE_USER_ONLY is "user_only"; the zero value has none, which the API writes as
 * null), with the 400 a name outside them gets. Derived once per enum.
 */
export function apiEnumOf(desc: DescEnum): ApiEnum {
  let e = byType.get(desc.typeName);
  if (!e) {
    const table = enumNamesOf(desc);
    e = {
      parse(value, at) {
        if (!table.is(value))
          throw badRequest(`${at} must be one of ${table.quoted}, got ${quote(value)}`);
        return table.value(value);
      },
      name: (value) => table.name(value) ?? null,
      names: table.names,
    };
    byType.set(desc.typeName, e);
  }
  return e;
}
