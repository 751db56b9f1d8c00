import { create, fromBinary, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  DataPolicySchema,
  FilterOutcomeSchema,
  type Generation,
  GenerationSchema,
  GenerationStatus,
  RoutingStepSchema,
  ShadowOutcomeSchema,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import { WHOLE_RECORD } from "../../../store/reservations.js";

/**
 * A request's record in two parts, so that what crash recovery needs costs the hot path two
 * JSON.stringify calls of plain objects rather than protobuf encodings: the draft, known at
 * admission and registered with the reservation, and the ending, sent with the settlement (or a
 * checkpoint). The store joins them in its outbox (store/reservations.ts); readers of the outbox
 * turn either form back into a Generation here.
 */
export interface RecordDraft {
  id: string;
  createdAtMs: number;
  model: string;
  characters: number;
  format: number;
  sessionId: string;
  user: string;
  trace?: JsonObject;
  filterOutcomes: {
    slug: string;
    label: string;
    action: number;
    count: number;
    guardrailId: string;
    policyId?: string;
  }[];
  guardrailId: string;
  /** The guardrail policy that decided (optional: a draft written before it was recorded). */
  policyId?: string;
  keyHash: string;
  workspaceId: string;
  voice: string;
  speed: number;
  dataRegion: number;
  /** "<source>:<guardrail id>" of each governing guardrail (Generation.governed_by). */
  governedBy: string[];
  /** Where a guardrail's shadow decided the request differently (Generation.shadow_outcome). */
  shadowOutcome?: {
    guardrailId: string;
    /** Set when the shadow is a guardrail policy's. */
    policyId?: string;
    live: string;
    shadow: string;
    reason: string;
  };
}

/** What a record says about how its request ended; absent fields read as nothing served. */
export interface RecordEnding {
  status?: number;
  provider?: string;
  byok?: boolean;
  costUsd?: number;
  bytes?: number;
  durationSeconds?: number;
  timeToFirstByteMs?: number;
  routing?: {
    provider: string;
    outcome: number;
    reason: string;
    attempts: number;
    status: number;
  }[];
  cached?: boolean;
  cacheDiscount?: number;
  servedDataPolicy?: {
    zeroDataRetention: boolean;
    safetyRetention: boolean;
    trainsOnData: boolean;
    publishesPrompts: boolean;
  };
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

export function encodeDraft(d: RecordDraft): Uint8Array {
  return utf8.encode(JSON.stringify(d));
}

/** The ending of a record the service finished (its status, cost and what it served). */
export function endingOf(g: Generation, status = g.status): RecordEnding {
  return {
    status,
    provider: g.provider,
    byok: g.byok,
    costUsd: g.costUsd,
    bytes: Number(g.bytes),
    durationSeconds: g.durationSeconds,
    timeToFirstByteMs: g.timeToFirstByteMs,
    routing: g.routing.map((r) => ({
      provider: r.provider,
      outcome: r.outcome,
      reason: r.reason,
      attempts: r.attempts,
      status: r.status,
    })),
    cached: g.cached,
    cacheDiscount: g.cacheDiscount,
    ...(g.servedDataPolicy
      ? {
          servedDataPolicy: {
            zeroDataRetention: g.servedDataPolicy.zeroDataRetention,
            safetyRetention: g.servedDataPolicy.safetyRetention,
            trainsOnData: g.servedDataPolicy.trainsOnData,
            publishesPrompts: g.servedDataPolicy.publishesPrompts,
          },
        }
      : {}),
  };
}

export function encodeEnding(e: RecordEnding): Uint8Array {
  return utf8.encode(JSON.stringify(e));
}

/** A whole record, for a settlement whose record is not its draft's (a refusal of its own). */
export function wholeRecord(g: Generation): Uint8Array {
  const bytes = toBinary(GenerationSchema, g);
  const out = new Uint8Array(bytes.byteLength + 1);
  out[0] = WHOLE_RECORD;
  out.set(bytes, 1);
  return out;
}

/** The record the draft and the ending make; a request recovered with no checkpoint: interrupted. */
export function recordOf(d: RecordDraft, e: RecordEnding): Generation {
  return create(GenerationSchema, {
    id: d.id,
    createdAt: timestampFromMs(d.createdAtMs),
    model: d.model,
    characters: d.characters,
    format: d.format,
    sessionId: d.sessionId,
    user: d.user,
    trace: d.trace,
    filterOutcomes: d.filterOutcomes.map((o) => create(FilterOutcomeSchema, o)),
    guardrailId: d.guardrailId,
    policyId: d.policyId ?? "",
    keyHash: d.keyHash,
    workspaceId: d.workspaceId,
    voice: d.voice,
    speed: d.speed,
    dataRegion: d.dataRegion,
    // A draft from a process that predates the field has none.
    governedBy: d.governedBy ?? [],
    shadowOutcome: d.shadowOutcome && create(ShadowOutcomeSchema, d.shadowOutcome),
    status: e.status ?? GenerationStatus.INTERRUPTED,
    provider: e.provider ?? "",
    byok: e.byok ?? false,
    costUsd: e.costUsd ?? 0,
    bytes: BigInt(e.bytes ?? 0),
    durationSeconds: e.durationSeconds ?? 0,
    timeToFirstByteMs: e.timeToFirstByteMs ?? 0,
    routing: (e.routing ?? []).map((r) => create(RoutingStepSchema, r)),
    cached: e.cached ?? false,
    cacheDiscount: e.cacheDiscount ?? 0,
    servedDataPolicy: e.servedDataPolicy && create(DataPolicySchema, e.servedDataPolicy),
  });
}

/** An outbox entry as the record it holds: "P" and a whole record, or "J", draft, newline, ending. */
export function recordFromOutbox(bytes: Uint8Array): Generation {
  if (bytes[0] === WHOLE_RECORD) return fromBinary(GenerationSchema, bytes.subarray(1));
  const joined = text.decode(bytes.subarray(1));
  const cut = joined.indexOf("\n");
  if (bytes[0] !== 0x4a || cut < 0) throw new Error("outbox entry in no known form");
  return recordOf(
    JSON.parse(joined.slice(0, cut)) as RecordDraft,
    JSON.parse(joined.slice(cut + 1)) as RecordEnding,
  );
}
