import type { ApiKey, Workspace } from "../../../gen/railgate/account/v1/account_pb.js";
import type { Guardrail } from "../../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { Admission, AdmissionResult, Settlement } from "./admission.js";

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

/** What governs a key, read in one round trip on the hot path. */
export interface Governance {
  key: ApiKey;
  keyGuardrail?: Guardrail;
  memberGuardrail?: Guardrail;
  defaultGuardrail?: Guardrail;
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

  // Organization.
  /** Creates the default workspace unless one was ever created; returns the current default id. */
  bootstrapDefaultWorkspace(candidate: Workspace): Promise<string | undefined>;
  defaultWorkspaceId(): Promise<string | undefined>;

  // Workspaces.
  createWorkspace(ws: Workspace): Promise<"ok" | "slug-taken">;
  getWorkspace(id: string): Promise<Workspace | undefined>;
  workspaceIdBySlug(slug: string): Promise<string | undefined>;
  listWorkspaces(offset: number, limit: number): Promise<Page<Workspace>>;
  updateWorkspace(ws: Workspace, previousSlug: string): Promise<"ok" | "slug-taken" | "missing">;
  /** Removes the workspace with its guardrails, keys and assignments. */
  deleteWorkspace(id: string): Promise<boolean>;

  // Guardrails. A guardrail's workspace never changes, so the pointer is cacheable.
  guardrailWorkspace(id: string): Promise<string | undefined>;
  getGuardrail(workspaceId: string, id: string): Promise<Versioned<Guardrail> | undefined>;
  /**
   * Writes a guardrail if its stored version still equals expectedVersion
   * (0 = it must not exist yet). Stores it with version expectedVersion + 1.
   */
  putGuardrail(
    g: Guardrail,
    expectedVersion: number,
  ): Promise<"ok" | "conflict" | "missing-workspace">;
  deleteGuardrail(workspaceId: string, id: string): Promise<boolean>;
  listGuardrails(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<Guardrail>>;

  // Keys. ORG_SCOPE holds management keys.
  createKey(scope: string, key: ApiKey): Promise<"ok" | "missing-workspace" | "exists">;
  keyScope(hash: string): Promise<string | undefined>;
  getKey(scope: string, hash: string): Promise<ApiKey | undefined>;
  putKey(scope: string, key: ApiKey): Promise<boolean>;
  deleteKey(scope: string, hash: string): Promise<boolean>;
  listKeys(scope: string | undefined, offset: number, limit: number): Promise<Page<ApiKey>>;

  // Assignments (key or member -> at most one guardrail), within one workspace.
  /** Assigns subjects; "missing" when the guardrail no longer exists. */
  assign(
    kind: AssignmentKind,
    records: AssignmentRecord[],
  ): Promise<{ assigned: number } | "missing">;
  unassign(
    kind: AssignmentKind,
    workspaceId: string,
    guardrailId: string,
    subjects: string[],
  ): Promise<number>;
  getAssignment(
    kind: AssignmentKind,
    workspaceId: string,
    subject: string,
  ): Promise<AssignmentRecord | undefined>;
  listAssignments(
    kind: AssignmentKind,
    workspaceId: string | undefined,
    guardrailId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<AssignmentRecord>>;

  /** The key and every guardrail that governs it, read atomically. */
  loadGovernance(hash: string): Promise<Governance | undefined>;

  // Opaque per-workspace records with a lifetime (generation records).
  putRecord(
    scope: string,
    kind: string,
    id: string,
    data: Uint8Array,
    ttlSeconds: number,
  ): Promise<void>;
  getRecord(scope: string, kind: string, id: string): Promise<Uint8Array | undefined>;

  // Metering: every counter changes atomically (Lua on Redis).
  /** Checks and reserves a request's rate, credits, key limit and budgets at once. */
  admit(admission: Admission): Promise<AdmissionResult>;
  /** Replaces an admitted request's reservations by what it really cost. */
  settle(admission: Admission, actual: Settlement, metered: boolean): Promise<void>;
  /** Workspace credit balance in micro-USD; undefined = unmetered. */
  getCredits(scope: string): Promise<number | undefined>;
  /** Adds (or, negative, removes) credits; the first call makes the workspace metered. */
  addCredits(scope: string, micros: number): Promise<number>;
  /** Current spend of budget windows, in micro-USD. */
  getSpend(scope: string, counters: { guardrailId: string; window: string }[]): Promise<number[]>;

  /**
   * Calls the listener with the scope (workspace id or "org") whose keys,
   * guardrails or assignments changed, in this process or, on Redis, any
   * replica. Returns an unsubscribe function.
   */
  onInvalidate(listener: (scope: string) => void): () => void;
}
