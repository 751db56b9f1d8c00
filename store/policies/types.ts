import type { JsonValue } from "@bufbuild/protobuf";
import type { AuditNote } from "../config-outbox/entry.js";

/** The three policy types OpenRouter's Guardrail Policies API serves. */
export const POLICY_TYPES = ["budget", "model_availability", "moderation"] as const;
export type PolicyType = (typeof POLICY_TYPES)[number];

export function isPolicyType(value: string): value is PolicyType {
  return (POLICY_TYPES as readonly string[]).includes(value);
}

export type SubjectKind = "api_key" | "member";

/** One policy as stored (plain JSON: it is written as part of its workspace's document). */
export interface StoredPolicy {
  id: string;
  workspaceId: string;
  policyType: PolicyType;
  name: string;
  /** The type's settings, validated, with the guardrail's snake_case names. */
  config: Record<string, unknown>;
  apiKeyHashes: string[];
  memberIds: string[];
  isWorkspaceDefault: boolean;
  optedOutApiKeyHashes: string[];
  optedOutMemberIds: string[];
  updatedAtMs: number;
  /** The guardrails whose part of this type the policy took over (see PolicyDoc.managedTypes). */
  replacedLegacyGuardrailIds?: string[];
  /**
   * The policy's versions so far: each create, replace and restore counts one, in the same
   * document write as the change, so versions are numbered in the order changes were made
   * (absent: none yet).
   */
  revision?: number;
  /** Its checks (railgate.guardrail.v1.GuardrailCheckList as protobuf JSON); absent: none. */
  checks?: JsonValue;
  /** The checks' last run (GuardrailCheckRun as protobuf JSON); absent: never run. */
  lastCheckRun?: JsonValue;
  /** A proposed replace decided beside this policy (services/guardrail-policies/shadow.ts). */
  shadow?: StoredPolicyShadow;
}

/**
 * A policy's shadow: the change as UpdateGuardrailPolicy (or UpdateAccountPolicy) took it (protobuf JSON, replayed as the
 * replace on promote) and the settings it leaves, validated when the shadow started.
 */
export interface StoredPolicyShadow {
  change: unknown;
  name: string;
  config: Record<string, unknown>;
  startedAtMs: number;
  expiresAtMs: number;
}

/** A workspace-wide ("account") policy: it governs every key and member of the workspaces it covers. */
export interface AccountPolicy {
  id: string;
  policyType: PolicyType;
  name: string;
  config: Record<string, unknown>;
  /** Covers every workspace but the opted-out ones. */
  isDefault: boolean;
  workspaceIds: string[];
  optedOutWorkspaceIds: string[];
  createdAtMs: number;
  updatedAtMs: number;
  /**
   * A proposed replace decided beside this policy in every workspace it covers
   * (services/guardrail-policies/account-shadow.ts); its change is an AccountPolicyInput.
   */
  shadow?: StoredPolicyShadow;
}

/** The document of account policies (see ACCOUNT_DOC). */
export const ACCOUNT_DOC = "org";

export function coversWorkspace(p: AccountPolicy, workspaceId: string): boolean {
  return p.isDefault
    ? !p.optedOutWorkspaceIds.includes(workspaceId)
    : p.workspaceIds.includes(workspaceId);
}

/**
 * Every policy of one workspace, written as one document so that a change is checked and applied
 * in one step. The account's workspace-wide policies are the document of ACCOUNT_DOC.
 */
export interface PolicyDoc {
  policies: StoredPolicy[];
  accountPolicies?: AccountPolicy[];
  /**
   * The types this workspace manages through the policies API: once a policy of a type is
   * written there, the workspace's guardrails no longer govern that type (their parts became
   * policies) and guardrail writes that would change it are refused.
   */
  managedTypes?: PolicyType[];
}

export function managesType(doc: PolicyDoc, type: PolicyType): boolean {
  return doc.managedTypes?.includes(type) ?? false;
}

export interface VersionedDoc {
  doc: PolicyDoc;
  /** 0 when the workspace has no document yet. */
  version: number;
  /**
   * How many guardrail writes (guardrails and their assignments) the workspace has had: a
   * write that moves a type to policies maps the guardrails read after this, and is applied only
   * while it is unchanged (see PolicyDocStore.write).
   */
  guardrailWrites: number;
}

/**
 * Where policy documents live: the embedded store's memory or Redis. A write names the version
 * it was computed from and is refused when another write came first, so the caller re-reads
 * and decides again (a stale expected assignment then becomes a 409, never a lost update).
 */
export interface PolicyDocStore {
  read(workspaceId: string): Promise<VersionedDoc>;
  /**
   * False when the stored version is no longer `expectedVersion`, or, when given, the
   * workspace's guardrail writes are no longer `expectedGuardrailWrites` (nothing written).
   * A document written is in the durable copy (store/config-outbox) as the other configuration
   * is, with `audit`'s event when given.
   */
  write(
    workspaceId: string,
    expectedVersion: number,
    doc: PolicyDoc,
    expectedGuardrailWrites?: number,
    audit?: AuditNote,
  ): Promise<boolean>;
  /** The workspace of a policy id, as indexed. */
  workspaceOf(policyId: string): Promise<string | undefined>;
  /** Indexes (or, with undefined, forgets) a policy's workspace. */
  index(policyId: string, workspaceId: string | undefined): Promise<void>;
}
