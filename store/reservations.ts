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
  /**
   * The record's draft, what is known at admission (never starts with "P"). A settlement's
   * record is then either "P" and a whole record, or only how the request ended, which the store
   * joins to the draft: "J", the draft, a newline, the ending. The speech service reads both
   * forms (services/speech/recovery/record-parts.ts); the store never looks inside.
   */
  record: Uint8Array;
}

/** A whole record in an outbox entry or a settlement starts with this byte ("P"). */
export const WHOLE_RECORD = 0x50;

/** The outbox entry of a record given as its ending, joined to its draft. */
export function joinedRecord(draft: Uint8Array, ending: Uint8Array): Uint8Array {
  const out = new Uint8Array(draft.byteLength + ending.byteLength + 2);
  out[0] = 0x4a;
  out.set(draft, 1);
  out[draft.byteLength + 1] = 0x0a;
  out.set(ending, draft.byteLength + 2);
  return out;
}

/** How a recovered request's record ends when nothing of it was checkpointed. */
export const NOTHING_CHECKPOINTED = new TextEncoder().encode("{}");

/** What an owner knows so far about a reservation it still holds. */
export interface ReservationCheckpoint {
  admissionId: string;
  leaseUntilMs: number;
  /** What settling now would charge, and how its record would end; absent: only the lease moves. */
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
