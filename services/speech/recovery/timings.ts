import type { RecoveryConfig } from "../../../platform/config/config.js";

/**
 * The timings of recovery from its bound: a lease runs two thirds of it and a pass looks every
 * sixth, so a dead owner's reservation (its last beat at most a lease before) is settled by a
 * pass within the bound; the owner beats several times per lease.
 */
export function recoveryTimings(c: RecoveryConfig) {
  const leaseMs = Math.floor((c.boundMs * 2) / 3);
  return {
    leaseMs,
    checkpointMs: Math.min(c.checkpointMs, Math.floor(leaseMs / 3)),
    passMs: Math.floor(c.boundMs / 6),
    outboxGraceMs: Math.min(5000, Math.floor(c.boundMs / 3)),
  };
}
