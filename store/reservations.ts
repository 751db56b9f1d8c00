import type { Admission, Settlement } from "./admission.js";

/**
 * A reservation whose owner may die: admitted with a lease, checkpointed while it runs, settled
 * exactly once, by its owner or, once the lease has run out, by any live process from the last
 * checkpoint. The record the settlement writes travels with it into the store's outbox, in the
 * same atomic step as the counters move, so no settled request is without its record.
 */
export interface Recovery {
  /** Until when the reservation belongs to its owner: past it any process may settle it. */
  leaseUntilMs: number;
  /** The record to write if the request is settled from here (status interrupted, cost 0). */
  record: Uint8Array;
}

/** What an owner knows so far about a reservation it still holds. */
export interface ReservationCheckpoint {
  admissionId: string;
  leaseUntilMs: number;
  /** What settling now would charge and record; absent: only the lease moves. */
  progress?: { actual: Settlement; record: Uint8Array };
}

/** A record settled into the store's outbox and not yet known to be in the request log. */
export interface OutboxRecord {
  scope: string;
  /** The admission's id: one record per admission. */
  id: string;
  record: Uint8Array;
}

/** A reservation that releases everything it held: what a request that served nothing costs. */
export function nothingServed(a: Admission): Settlement {
  return {
    creditMicros: 0,
    keyMicros: 0,
    byokMicros: 0,
    budgets: a.budgets.map((b) => ({
      guardrailId: b.guardrailId,
      entity: b.entity,
      amountMicros: 0,
    })),
  };
}

/**
 * What a recovering process needs of an admission to settle it (the rate window and the limits
 * were checked and have no part in settling). Plain JSON, stored beside the reservation.
 */
export function admissionForRecovery(a: Admission): string {
  return JSON.stringify({
    id: a.id,
    scope: a.scope,
    keyHash: a.keyHash,
    creditMicros: a.creditMicros,
    keyMicros: a.keyMicros,
    keyLimitWindow: a.keyLimitWindow,
    budgets: a.budgets,
  });
}

export function admissionFromRecovery(json: string): Admission {
  return JSON.parse(json) as Admission;
}
