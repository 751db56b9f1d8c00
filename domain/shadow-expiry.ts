import { fail } from "../platform/rpc/request-rules.js";

/** How far ahead a shadow may run: long enough for a month's traffic, never forgotten. */
export const SHADOW_MAX_DAYS = 30;

/** expires_at of a new shadow (a guardrail's or a policy's): after now, at most SHADOW_MAX_DAYS ahead. */
export function shadowExpiry(ms: number | undefined, nowMs: number): void {
  if (ms === undefined) fail(`expires_at is required (at most ${SHADOW_MAX_DAYS} days ahead)`);
  if (ms <= nowMs) fail("expires_at must be in the future");
  if (ms > nowMs + SHADOW_MAX_DAYS * 86_400_000)
    fail(`expires_at must be at most ${SHADOW_MAX_DAYS} days ahead`);
}
