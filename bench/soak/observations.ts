/** What the soak saw: every answer a client got, and what the system held at the end. */

export type CallKind = "speech" | "write" | "read";

/** One HTTP call as its client saw it. Status 0: no answer (connection refused, reset, timeout). */
export interface CallObservation {
  kind: CallKind;
  /** "POST /api/v1/audio/speech", "PATCH /api/v1/keys/:hash"... (the route, not the ids). */
  route: string;
  status: number;
  /** The parsed JSON body of a refusal (4xx/5xx), or its text when it is not JSON. */
  errorBody?: unknown;
  /** Speech: the X-Generation-Id header of a 200. */
  generationId?: string;
  /** Speech: the 200's body ended whole (not cut by a process that died). */
  complete?: boolean;
  /** Writes: the X-Request-Id the client sent, which the audit event carries. */
  requestId?: string;
  /** When the answer came, in whole seconds since the load started. */
  atSeconds?: number;
  /** Speech: the key it used (its hash). */
  keyHash?: string;
}

/** A request-log record, as GET /api/v1/generations lists it. */
export interface RecordObservation {
  id: string;
  keyHash: string;
  workspaceId: string;
  costMicros: number;
}

/** An audit event, as GET /api/v1/audit-log lists it. */
export interface AuditObservation {
  id: string;
  requestId: string | null;
  action: string;
}

/** A key's spend as its usage API answers it. */
export interface KeyUsageObservation {
  keyHash: string;
  usageMicros: number;
}

/** A metered workspace's credits as GET /workspaces/:id/credits answers them. */
export interface CreditsObservation {
  workspaceId: string;
  addedMicros: number;
  balanceMicros: number;
}

/** One member of a workspace's reservation registry (`{w:<id>}:resv-i`). */
export interface ReservationObservation {
  workspaceId: string;
  admissionId: string;
  leaseExpiryMs: number;
}

/** USD as a JSON number -> integer micro-dollars (the unit every spend check compares in). */
export function micros(usd: number): number {
  return Math.round(usd * 1_000_000);
}
