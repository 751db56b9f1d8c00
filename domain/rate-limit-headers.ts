/**
 * The per-key rate window as the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers,
 * the separate-fields form most clients read): the speech service sets them as response metadata
 * of Synthesize (and on its 429), the gateway copies them onto the HTTP response.
 */
export const RATE_LIMIT_HEADERS = ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"];

export interface RateWindowState {
  /** Requests the key may make per window. */
  limit: number;
  /** Requests left in the current window, this one counted. */
  remaining: number;
  /** Whole seconds until the window ends (at least 1: "0" would invite a retry storm). */
  resetSeconds: number;
}

export function rateLimitHeaderValues(state: RateWindowState): [string, string][] {
  return [
    ["ratelimit-limit", String(state.limit)],
    ["ratelimit-remaining", String(Math.max(0, state.remaining))],
    ["ratelimit-reset", String(Math.max(1, state.resetSeconds))],
  ];
}

/** The RateLimit fields present in `headers` (metadata of a call or of its error), by name. */
export function pickRateLimitHeaders(headers: Headers): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of RATE_LIMIT_HEADERS) {
    const value = headers.get(name);
    if (value !== null) picked[name] = value;
  }
  return picked;
}
