import type { ApiKey, Workspace } from "../gen/railgate/account/v1/account_pb.js";
import type { Guardrail } from "../gen/railgate/guardrail/v1/guardrail_pb.js";
import type {
  Admission,
  AdmissionResult,
  GuardrailSpend,
  GuardrailSpendQuery,
  Settlement,
  SpendWindow,
} from "./admission.js";
import type { AudioClipStore } from "./audio-clips/types.js";
import type { AuditNote } from "./config-outbox/entry.js";
import type { KeyUsage } from "./key-usage.js";
import type { LimitReached } from "./limits.js";
import type { PolicyDocStore } from "./policies/types.js";
import type { SqlDatabase } from "./request-log/database.js";
import type { OutboxRecord, ReservationCheckpoint } from "./reservations.js";

/** A page of items and the total number that match. */
export interface Page<T> {
  items: T[];
  total: number;
}

export interface Versioned<T> {
  value: T;
  version: number;
}

/** An assignment of a guardrail to a key or to a member (plain data, not a message). */
export interface AssignmentRecord {
  id: string;
  /** The key hash or the member's user id. */
  subject: string;
  guardrailId: string;
  workspaceId: string;
  assignedBy: string;
  createdAtMs: number;
}

export type AssignmentKind = "key" | "member";

/** A member added to a workspace (plain data, stored as JSON): OpenRouter's WorkspaceMember. */
export interface MemberRecord {
  id: string;
  userId: string;
  workspaceId: string;
  role: "admin" | "member";
  createdAtMs: number;
}

/** What an add of members did: how many it created, and the membership of each user asked. */
export interface MembersAdded {
  added: number;
  members: MemberRecord[];
}

/** What governs a key, read in one round trip on the hot path. */
export interface Governance {
  key: ApiKey;
  keyGuardrail?: Guardrail;
  memberGuardrail?: Guardrail;
  defaultGuardrail?: Guardrail;
}

/**
 * A PATCH of one guardrail, applied inside the store in one atomic step:
 * only the named fields are written, so writers of other fields never
 * conflict. The caller validated `next` (the record it read with the patch
 * applied); the rules that span fields hold on the stored result as long as
 * the `unchanged` fields still hold what was read, which the store checks.
 */
export interface GuardrailPatch {
  workspaceId: string;
  id: string;
  /** The version the patch was computed from; 0 = the guardrail was missing. */
  readVersion: number;
  /** Proto names of the fields to write, taken from `next`. */
  fields: string[];
  next: Guardrail;
  /** Proto names of fields `next` was validated against but does not write. */
  unchanged: string[];
  read: Guardrail;
  /** A workspace default: when missing (and readVersion is 0), create it from `next` whole. */
  materialize: boolean;
  /**
   * The version of the workspace's policy document the patch was decided under (which types
   * policies manage there): "conflict" once it moved on. Absent: unchecked.
   */
  policyDocVersion?: number;
}

/** The first answer to a request made with an Idempotency-Key, as the client read it. */
export interface IdempotentAnswer {
  status: number;
  body: string;
}

/** What a claim of an idempotency id found. */
export type IdempotencyClaim =
  /** The id was free: the caller runs the request and completes (or releases) with `token`. */
  | { state: "claimed"; token: string }
  /** Another request holds it (its answer is not stored yet). */
  | { state: "in-progress"; fingerprint: string }
  /** The request was answered: `answer` is what the first one got. */
  | { state: "done"; fingerprint: string; answer: IdempotentAnswer };

/**
 * The claims and answers of requests made with an Idempotency-Key, one record per id (a hash of
 * the caller and the key): a claim lives `claimSeconds` unless completed, an answer `ttlSeconds`.
 */
export interface IdempotencyLedger {
  /** Claims `id` for a request whose `fingerprint` (method, path, body) is given, or reads it. */
  claimIdempotency(
    id: string,
    fingerprint: string,
    claimSeconds: number,
  ): Promise<IdempotencyClaim>;
  /** Stores the answer of the claim `token` took; false when the claim was lost (it expired). */
  completeIdempotency(
    id: string,
    token: string,
    answer: IdempotentAnswer,
    ttlSeconds: number,
  ): Promise<boolean>;
  /** Frees the claim `token` took (the request may run again), unless it was lost already. */
  releaseIdempotency(id: string, token: string): Promise<void>;
}

/** Where management keys live: a pseudo workspace of the organization. */
export const ORG_SCOPE = "org";

/**
 * All persistent state. Two implementations with one contract: Redis (the
 * real deployment, every multi-key operation atomic and on one hash tag) and
 * an in-process memory store used only when no Redis is reachable.
 */
export interface Store {
  readonly kind: "redis" | "memory";
  close(): Promise<void>;
  /** Resolves when the store answers (health checks); throws when it does not. */
  ping(): Promise<void>;

  /**
   * Management writes take an optional AuditNote: a store that records audit (the Redis store
   * once attachConfigLog ran) writes its event in the same atomic step as the change, through
   * its outbox; otherwise the caller records it (recordsAudit false).
   */
  readonly recordsAudit: boolean;
  /** Records every management write (audit event and objects changed) in this database. */
  attachConfigLog(db: SqlDatabase): void;
  /** Refills the store from that database when it lost its configuration (before serving). */
  restoreConfig(): Promise<void>;

  // Organization.
  /** Creates the default workspace unless one was ever created; returns the current default id. */
  bootstrapDefaultWorkspace(candidate: Workspace): Promise<string | undefined>;
  defaultWorkspaceId(): Promise<string | undefined>;

  // Workspaces.
  /** Refused with LimitReached beyond COUNT_LIMITS.workspaces. */
  createWorkspace(ws: Workspace, audit?: AuditNote): Promise<"ok" | "slug-taken" | LimitReached>;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  workspaceIdBySlug(slug: string): Promise<string | undefined>;
  listWorkspaces(offset: number, limit: number): Promise<Page<Workspace>>;
  updateWorkspace(
    ws: Workspace,
    previousSlug: string,
    audit?: AuditNote,
  ): Promise<"ok" | "slug-taken" | "missing">;
  /**
   * Removes the workspace with its guardrails, (disabled) keys and
   * assignments, atomically refused while it holds enabled keys: their
   * count comes back and nothing is deleted.
   */
  deleteWorkspace(
    id: string,
    audit?: AuditNote,
  ): Promise<"ok" | "missing" | { activeKeys: number }>;

  // Guardrails. A guardrail's workspace never changes, so the pointer is cacheable.
  guardrailWorkspace(id: string): Promise<string | undefined>;
  /** A copy of the guardrail as stored: the caller may change it. */
  getGuardrail(workspaceId: string, id: string): Promise<Versioned<Guardrail> | undefined>;
  /**
   * The guardrail as stored, for a read-only answer: the value may be shared with other
   * readers (the Redis store keeps the message it decoded while the stored bytes stay the same),
   * and it is then frozen.
   */
  readGuardrail(
    workspaceId: string,
    id: string,
  ): Promise<Versioned<Readonly<Guardrail>> | undefined>;
  /**
   * Creates a guardrail at version 1. Refused with LimitReached beyond
   * COUNT_LIMITS.guardrailsPerWorkspace (a workspace default does not count), and with
   * "conflict" when the workspace's policy document is no longer at `policyDocVersion` (the
   * version it was decided under; absent: unchecked).
   */
  createGuardrail(
    g: Guardrail,
    audit?: AuditNote,
    policyDocVersion?: number,
  ): Promise<"ok" | "exists" | "missing-workspace" | "conflict" | LimitReached>;
  /**
   * Applies a patch and bumps the version: the stored result, "conflict" when
   * an `unchanged` field changed (or the guardrail vanished) since it was
   * read, "missing" when there is nothing to patch.
   */
  patchGuardrail(
    p: GuardrailPatch,
    audit?: AuditNote,
  ): Promise<Versioned<Guardrail> | "conflict" | "missing">;
  deleteGuardrail(workspaceId: string, id: string, audit?: AuditNote): Promise<boolean>;
  listGuardrails(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Guardrail>>;

  // Keys. ORG_SCOPE holds management keys.
  /** Refused with LimitReached beyond COUNT_LIMITS.keysPerWorkspace (managementKeys in ORG_SCOPE). */
  createKey(
    scope: string,
    key: ApiKey,
    audit?: AuditNote,
  ): Promise<"ok" | "missing-workspace" | "exists" | LimitReached>;
  keyScope(hash: string): Promise<string | undefined>;
  getKey(scope: string, hash: string): Promise<ApiKey | undefined>;
  putKey(scope: string, key: ApiKey, audit?: AuditNote): Promise<boolean>;
  deleteKey(scope: string, hash: string, audit?: AuditNote): Promise<boolean>;
  /** Pages in creation order; enabledOnly pages (and counts) the enabled keys alone. */
  listKeys(
    scope: string | undefined,
    offset: number,
    limit: number,
    enabledOnly?: boolean,
  ): Promise<Page<ApiKey>>;

  // Assignments (key or member -> at most one guardrail), within one workspace.
  /**
   * Assigns subjects; "missing" when the guardrail no longer exists. Refused
   * as a whole (LimitReached) when the new subjects would take the
   * workspace's assignments of this kind past their limit.
   */
  assign(
    kind: AssignmentKind,
    records: AssignmentRecord[],
    audit?: AuditNote,
  ): Promise<{ assigned: number } | "missing" | LimitReached>;
  unassign(
    kind: AssignmentKind,
    workspaceId: string,
    guardrailId: string,
    subjects: string[],
    audit?: AuditNote,
  ): Promise<number>;
  getAssignment(
    kind: AssignmentKind,
    workspaceId: string,
    subject: string,
  ): Promise<AssignmentRecord | undefined>;
  /** Pages by workspace, then by time of assignment (then subject). */
  listAssignments(
    kind: AssignmentKind,
    workspaceId: string | undefined,
    guardrailId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<AssignmentRecord>>;

  // Workspace members: the ones added (the account service derives the implicit ones).
  /**
   * Adds the records (one per user id) whose user is not a member yet, in one atomic step;
   * "missing" when the workspace is gone. Refused as a whole (LimitReached) when the new members
   * would take the workspace past its limit (COUNT_LIMITS.membersPerWorkspace).
   */
  addMembers(
    workspaceId: string,
    records: MemberRecord[],
    audit?: AuditNote,
  ): Promise<MembersAdded | "missing" | LimitReached>;
  /** Removes these users' memberships; answers how many there were. */
  removeMembers(workspaceId: string, userIds: string[], audit?: AuditNote): Promise<number>;
  /** Every added member of the workspace, by time of addition (then user id). */
  listMembers(workspaceId: string): Promise<MemberRecord[]>;

  /** The key and every guardrail that governs it, read atomically. */
  loadGovernance(hash: string): Promise<Governance | undefined>;

  // Metering: every counter changes atomically (Lua on Redis).
  /** Checks and reserves a request's rate, credits, key limit and budgets at once. */
  admit(admission: Admission): Promise<AdmissionResult>;
  /**
   * Replaces an admitted request's reservations by what it really cost, in one round trip (one
   * script on Redis), and puts its record (when given) in the outbox in the same step. Once per
   * admission: a repeat (or a reservation a recovering process already settled) changes
   * nothing and answers false.
   */
  settle(
    admission: Admission,
    actual: Settlement,
    metered: boolean,
    record?: Uint8Array,
  ): Promise<boolean>;
  /**
   * An owner's heartbeat for the reservations it still holds: moves their leases and stores what
   * each has served so far. Answers how many were still held.
   */
  keepReservations(scope: string, checkpoints: ReservationCheckpoint[]): Promise<number>;
  /**
   * Settles the reservations whose lease ended before `nowMs` (their owner died or froze) from
   * their last checkpoint, records into the outbox, at most `max` per scope. Answers how many.
   */
  recoverReservations(nowMs: number, max: number): Promise<number>;
  /** Leases of reservations still held, oldest first (operators, the soak's checks). */
  reservationLeases(scope: string): Promise<{ id: string; leaseUntilMs: number }[]>;
  /** Outbox records put there before `beforeMs`, at most `max`, for the request log. */
  outboxRecords(beforeMs: number, max: number): Promise<OutboxRecord[]>;
  /** Records now stored in the request log leave the outbox. */
  outboxDone(scope: string, ids: string[]): Promise<void>;
  /** Workspace credit balance in micro-USD; undefined = unmetered. */
  getCredits(scope: string): Promise<number | undefined>;
  /** Adds (or, negative, removes) credits; the first call makes the workspace metered. */
  addCredits(scope: string, micros: number, audit?: AuditNote): Promise<number>;
  /**
   * addCredits once per `onceId` (an idempotency id) for `ttlSeconds`: the marker is set in the
   * same atomic step that moves the credits (and writes the audit event), so a call repeated
   * after a crash or a lost answer adds nothing, records nothing and reads the balance.
   */
  addCreditsOnce(
    scope: string,
    micros: number,
    onceId: string,
    ttlSeconds: number,
    audit?: AuditNote,
  ): Promise<{ balanceMicros: number; applied: boolean }>;
  /** Every credit ever added (less what was removed), in micro-USD: usage = added - balance. */
  getCreditsAdded(scope: string): Promise<number>;
  /** A key's settled spend, all-time and per budget window at `now`, on credits and BYOK. */
  getKeyUsage(scope: string, keyHash: string, now: Date): Promise<KeyUsage>;
  /** What each counter spent over the days of its window, in micro-USD. */
  getSpend(scope: string, windows: SpendWindow[]): Promise<number[]>;
  /**
   * What every entity charged under each guardrail spent in that guardrail's
   * window, in the order asked, read in one round trip (metrics scrapes). Only
   * entities charged since the window's first day are read: admission indexes
   * each counter by the last day it was charged.
   */
  getGuardrailSpend(scope: string, queries: GuardrailSpendQuery[]): Promise<GuardrailSpend[]>;

  // Idempotency-Key: the claims and answers of management writes (see IdempotencyLedger).
  claimIdempotency: IdempotencyLedger["claimIdempotency"];
  completeIdempotency: IdempotencyLedger["completeIdempotency"];
  releaseIdempotency: IdempotencyLedger["releaseIdempotency"];

  /**
   * Calls the listener with the scope (workspace id or "org") whose keys,
   * guardrails or assignments changed, in this process or, on Redis, any
   * replica. Returns an unsubscribe function.
   */
  onInvalidate(listener: (scope: string) => void): () => void;

  /**
   * The audio cache's clips in this store (Redis: shared by every replica, one workspace per
   * hash tag; memory: this process only, within `memoryBytes` over every workspace).
   */
  openAudioClips(options: { memoryBytes: number }): AudioClipStore;
  /** Guardrail policy documents, in this store (store/policies). */
  openPolicyDocs(): PolicyDocStore;
}
