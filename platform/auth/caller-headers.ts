/**
 * Metadata every internal call may carry besides `authorization`. Shared by
 * the services (which check them) and the gateway (which sends them).
 */
export const CALLER_HEADERS = {
  /** The service credential (RAILGATE_INTERNAL_TOKEN) that proves a Railgate gateway. */
  internalToken: "railgate-internal-token",
  /** The ingress region a gateway asserts for its client; refused from anyone else. */
  ingressRegion: "railgate-ingress-region",
} as const;
