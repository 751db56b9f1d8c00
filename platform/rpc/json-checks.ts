import { quote } from "../quote.js";

/*
 * Checks of free-form JSON values (trace, provider options) against their
 * JsonLimits; the numbers themselves are in domain/limits.ts.
 */

/** How large a free-form JSON value (trace, provider options) may be. */
export interface JsonLimits {
  /** Size as compact JSON, in bytes (UTF-8). */
  maxBytes: number;
  /** Levels of objects and arrays, the value itself being level 1. */
  maxDepth: number;
  /** Object keys and array items, counted at every level. */
  maxItems: number;
}

/** What has been counted so far against one set of limits. */
interface Tally {
  bytes: number;
  items: number;
}

/**
 * Walks a JSON value, adding to `tally`, and returns the first rule it breaks
 * (as the end of a sentence) or undefined. It stops at the first broken limit,
 * so a huge value costs no more than the limit; recursion is bounded by maxDepth.
 */
function measure(v: unknown, depth: number, limits: JsonLimits, tally: Tally): string | undefined {
  if (v !== null && typeof v === "object") {
    if (depth > limits.maxDepth) return `may nest at most ${limits.maxDepth} levels deep`;
    tally.bytes += 2;
    const isArray = Array.isArray(v);
    const keys = isArray ? undefined : Object.keys(v);
    const count = isArray ? v.length : (keys?.length ?? 0);
    for (let i = 0; i < count; i++) {
      tally.items += 1;
      if (tally.items > limits.maxItems)
        return `may hold at most ${limits.maxItems} keys and items in all`;
      const key = keys?.[i];
      tally.bytes += key === undefined ? 1 : Buffer.byteLength(key) + 4;
      if (tally.bytes > limits.maxBytes) break;
      const child = isArray ? v[i] : (v as Record<string, unknown>)[key as string];
      const problem = measure(child, depth + 1, limits, tally);
      if (problem) return problem;
    }
  } else if (typeof v === "string") tally.bytes += Buffer.byteLength(v) + 2;
  else tally.bytes += String(v).length;
  if (tally.bytes > limits.maxBytes) return `must be at most ${limits.maxBytes} bytes as JSON`;
  return undefined;
}

/** `parent.key`, with the key quoted when it is not a plain name (it comes from the client). */
export function fieldPath(parent: string, key: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(key) ? `${parent}.${key}` : `${parent}[${quote(key)}]`;
}

/**
 * Checks a free-form JSON value against its limits; `fail` builds the error
 * (a 400 at the gateway, InvalidArgument in a service) from a message naming the field.
 */
export function checkJsonLimits(
  field: string,
  value: unknown,
  limits: JsonLimits,
  fail: (message: string) => Error,
): void {
  const problem = measure(value, 1, limits, { bytes: 0, items: 0 });
  if (problem) throw fail(`${field} ${problem}`);
}

/**
 * Checks an object whose members share one set of limits (all of
 * `provider.options` together), naming the member where a limit is crossed.
 */
export function checkJsonMembers(
  field: string,
  value: Record<string, unknown>,
  limits: JsonLimits,
  fail: (message: string) => Error,
): void {
  const tally: Tally = { bytes: 2, items: 0 };
  const keys = Object.keys(value);
  for (const key of keys) {
    tally.items += 1;
    tally.bytes += Buffer.byteLength(key) + 4;
    const problem =
      tally.items > limits.maxItems || tally.bytes > limits.maxBytes
        ? "goes past the limits"
        : measure(value[key], 2, limits, tally);
    if (problem) {
      throw fail(
        `${fieldPath(field, key)} ${problem} (${field} together: at most ${limits.maxBytes} bytes as JSON, ${limits.maxItems} keys and items, ${limits.maxDepth} levels)`,
      );
    }
  }
}
