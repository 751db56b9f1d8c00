import { hash } from "node:crypto";

/** The request header (Stripe's name and rule), lower case as node:http reads it. */
export const IDEMPOTENCY_KEY_HEADER = "idempotency-key";
/** Set on an answer that repeats the one stored for its key. */
export const IDEMPOTENT_REPLAYED_HEADER = "idempotent-replayed";
/** Stripe's bound on the key's length. */
export const IDEMPOTENCY_KEY_MAX_CHARS = 255;
/** How long a key's answer (and a credit top-up's marker) is kept: a retry within this applies once. */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 60 * 60;
/**
 * How long a claim whose answer never came stays "in progress": a process that died between the
 * claim and the answer holds the key this long at most, then a retry runs again.
 */
export const IDEMPOTENCY_CLAIM_SECONDS = 60;

const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

/**
 * The rule a key breaks, or undefined when it is one: 1 to 255 printable ASCII characters (space
 * to tilde), one header only.
 */
export function idempotencyKeyProblem(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value)) return "Idempotency-Key must be sent once";
  if (
    value.length === 0 ||
    value.length > IDEMPOTENCY_KEY_MAX_CHARS ||
    !PRINTABLE_ASCII.test(value)
  )
    return `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters`;
  return undefined;
}

/**
 * The identity of a caller's key: a fixed-length hash of the caller (its key hash) and the
 * client's key, so two callers never share one and a stored name never carries client text.
 */
export function idempotencyId(callerKeyHash: string, key: string): string {
  return hash("sha256", `${callerKeyHash}\n${key}`, "hex");
}
