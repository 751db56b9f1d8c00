/**
 * Documented limits of account fields (README "Limits"): the service checks them, and the
 * gateway's OpenAPI document states them, from these same constants.
 */
export const ACCOUNT_LIMITS = {
  /** Key and workspace names, in characters (code points). */
  nameMax: 100,
  /** Workspace descriptions, in characters. */
  descriptionMax: 500,
  memberIdMax: 256,
  rateLimitPerMinuteMax: 1_000_000,
  /** At most this much in one top-up, so a typo cannot make a workspace effectively unmetered. */
  topUpUsdMax: 1_000_000,
} as const;
