import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { UUID_INPUT_PATTERN, UUID_RE } from "../../domain/ids.js";
import { quote } from "../../platform/quote.js";
import type { JsonSchema } from "../openapi/spec-schema.js";
import { badRequest } from "./fields.js";

/**
 * Query parameters of the request-log routes (generations, activity, usage): read here,
 * checked here for what HTTP alone says (a time that does not parse, a malformed id), so the
 * 400 names the parameter as the client spelled it; the service checks the rest.
 */
export const KEY_HASH_RULES: JsonSchema = { type: "string", pattern: "^[0-9a-f]{64}$" };
export const WORKSPACE_ID_RULES: JsonSchema = { type: "string", pattern: UUID_INPUT_PATTERN };
export const TIME_RULES: JsonSchema = { type: "string", format: "date-time" };

/** ISO 8601 with a date and a time (and a zone; "Z" or an offset), or a bare date (UTC midnight). */
const ISO =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/;

export function queryTime(params: URLSearchParams, name: string) {
  const raw = params.get(name);
  if (raw === null || raw === "") return undefined;
  const ms = ISO.test(raw) ? Date.parse(raw.length === 10 ? `${raw}T00:00:00Z` : raw) : NaN;
  if (Number.isNaN(ms))
    throw badRequest(
      `${name} must be an ISO 8601 date-time (2026-11-26T08:00:00Z), got ${quote(raw)}`,
    );
  return timestampFromMs(ms);
}

export function queryPattern(params: URLSearchParams, name: string, rule: RegExp, what: string) {
  const raw = params.get(name) ?? "";
  if (raw !== "" && !rule.test(raw)) throw badRequest(`${name} must be ${what}, got ${quote(raw)}`);
  return raw;
}

export function queryKeyHash(params: URLSearchParams, name: string): string {
  return queryPattern(params, name, /^[0-9a-f]{64}$/, "64 lowercase hex characters (a key hash)");
}

export function queryWorkspaceId(params: URLSearchParams): string {
  return queryPattern(params, "workspace_id", UUID_RE, "a workspace id (a UUID)");
}

export function queryEnum<N extends string>(
  params: URLSearchParams,
  name: string,
  values: readonly N[],
): N | "" {
  const raw = params.get(name) ?? "";
  if (raw !== "" && !(values as readonly string[]).includes(raw))
    throw badRequest(`${name} must be one of ${values.join(", ")}, got ${quote(raw)}`);
  return raw as N | "";
}

/**
 * A query parameter that names a proto enum's value by its API name (platform/enum-names.ts, or
 * a table of the same shape): the value, or UNSPECIFIED (0) when the parameter is absent.
 */
export function queryEnumValue<N extends string, V extends number>(
  params: URLSearchParams,
  name: string,
  names: { readonly names: readonly N[]; value(name: N): V },
): V | 0 {
  const raw = queryEnum(params, name, names.names);
  return raw === "" ? 0 : names.value(raw);
}
