import { PAGE_LIMITS } from "../../domain/limits.js";
import { quote } from "../../platform/quote.js";
import { HttpError } from "../http-error.js";

/**
 * JSON types of body fields. Numbers map to protobuf doubles ("number": any
 * finite value fits) or int32 ("int32": checked here, because an out-of-range
 * value fails protobuf serialization, which the client would see as a 500).
 */
export type FieldType = "string" | "boolean" | "number" | "int32" | "array" | "object";

export const INT32_MIN = -(2 ** 31);
export const INT32_MAX = 2 ** 31 - 1;
export interface FieldSpec {
  type: FieldType;
  nullable?: boolean;
  /**
   * The rules on the value the service checks (lengths, ranges, enums), as JSON Schema
   * keywords built from the service's own constants. They are for the document: the service
   * applies them, so gRPC callers get the same answers.
   */
  rules?: { [keyword: string]: unknown };
}
export type Spec = Record<string, FieldSpec>;

/** A JSON Schema pattern for "not blank": at least one character other than white space. */
export const NOT_BLANK = "\\S";

export function badRequest(message: string): HttpError {
  return new HttpError(400, message);
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  return typeof v;
}

/** What a wrong value was: a number as itself (it is short), anything else by its type. */
function shown(v: unknown): string {
  return typeof v === "number" ? String(v) : typeOf(v);
}

function matches(v: unknown, type: FieldType): boolean {
  switch (type) {
    case "string":
      return typeof v === "string";
    case "boolean":
      return typeof v === "boolean";
    case "number":
      return typeof v === "number" && Number.isFinite(v);
    case "int32":
      return typeof v === "number" && Number.isInteger(v) && v >= INT32_MIN && v <= INT32_MAX;
    case "array":
      return Array.isArray(v);
    case "object":
      return v !== null && typeof v === "object" && !Array.isArray(v);
  }
}

const ARTICLE: Record<FieldType, string> = {
  string: "a string",
  boolean: "true or false",
  number: "a finite number",
  int32: `an integer from ${INT32_MIN} to ${INT32_MAX}`,
  array: "an array",
  object: "an object",
};

/**
 * Rejects unknown fields and wrong JSON types, naming the field, so that a
 * typo never silently does nothing.
 */
export function checkFields(body: Record<string, unknown>, spec: Spec, where = ""): void {
  for (const [name, value] of Object.entries(body)) {
    // Own properties only: "constructor" or "__proto__" are unknown fields too.
    const s = Object.hasOwn(spec, name) ? spec[name] : undefined;
    if (!s) throw badRequest(`Unknown field ${quote(`${where}${name}`)}`);
    const field = `${where}${name}`;
    if (value === null) {
      if (!s.nullable) throw badRequest(`${field} must be ${ARTICLE[s.type]}, not null`);
      continue;
    }
    if (!matches(value, s.type)) {
      throw badRequest(
        `${field} must be ${ARTICLE[s.type]}${s.nullable ? " or null" : ""}, got ${shown(value)}`,
      );
    }
  }
}

export function has(body: Record<string, unknown>, name: string): boolean {
  return Object.hasOwn(body, name);
}

/** Checks each element of an array field against a type. */
export function checkElements(field: string, values: unknown[], type: FieldType): void {
  values.forEach((v, i) => {
    if (!matches(v, type))
      throw badRequest(`${field}[${i}] must be ${ARTICLE[type]}, got ${typeOf(v)}`);
  });
}

/** Parses a query-string integer, naming the parameter when it is not one. */
export function queryInt(params: URLSearchParams, name: string): number {
  const raw = params.get(name);
  if (raw === null || raw === "") return 0;
  const n = /^-?\d{1,12}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isInteger(n) || n < INT32_MIN || n > INT32_MAX)
    throw badRequest(`${name} must be ${ARTICLE.int32}, got ${quote(raw)}`);
  return n;
}

/**
 * The offset and limit of a list. On the wire a limit of 0 means "the
 * default", so an explicit limit=0 is rejected here rather than passed on;
 * the service checks the remaining bounds.
 */
export function queryPage(params: URLSearchParams): { offset: number; limit: number } {
  const limit = queryInt(params, "limit");
  if (params.has("limit") && limit === 0) {
    throw badRequest(`limit must be an integer from 1 to ${PAGE_LIMITS.max}`);
  }
  return { offset: queryInt(params, "offset"), limit };
}

/** The value rules of the paging parameters queryPage reads (the service's bounds). */
export const PAGE_QUERY_RULES: Readonly<Record<string, { [keyword: string]: unknown }>> = {
  offset: { type: "integer", minimum: 0, maximum: INT32_MAX },
  limit: { type: "integer", minimum: 1, maximum: PAGE_LIMITS.max },
};

/** Only the named query parameters are accepted. */
export function checkQuery(params: URLSearchParams, allowed: readonly string[]): void {
  for (const name of params.keys()) {
    if (!allowed.includes(name)) throw badRequest(`Unknown query parameter ${quote(name)}`);
  }
}
