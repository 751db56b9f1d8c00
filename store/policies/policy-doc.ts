import type { PolicyDoc, PolicyType, StoredPolicy, SubjectKind } from "./types.js";

/** Pure reads and edits of a workspace's policy document: what every handler decides from. */

export function directList(p: StoredPolicy, kind: SubjectKind): string[] {
  return kind === "api_key" ? p.apiKeyHashes : p.memberIds;
}

export function optedOutList(p: StoredPolicy, kind: SubjectKind): string[] {
  return kind === "api_key" ? p.optedOutApiKeyHashes : p.optedOutMemberIds;
}

export interface AssignmentState {
  optedOut: boolean;
  policyIds: string[];
  workspaceDefaultPolicyIds: string[];
}

/**
 * What governs a subject for one type: the policies assigned to it directly, and the workspace
 * default it inherits (none when it opted out, or when a policy of the type is assigned to it
 * directly: that policy overrides the default).
 */
export function assignmentState(
  doc: PolicyDoc,
  type: PolicyType,
  kind: SubjectKind,
  subject: string,
): AssignmentState {
  const ofType = doc.policies.filter((p) => p.policyType === type);
  const policyIds = ofType.filter((p) => directList(p, kind).includes(subject)).map((p) => p.id);
  const defaults = ofType.filter((p) => p.isWorkspaceDefault);
  const optedOut = defaults.some((p) => optedOutList(p, kind).includes(subject));
  const workspaceDefaultPolicyIds =
    optedOut || policyIds.length > 0 ? [] : defaults.map((p) => p.id);
  return { optedOut, policyIds, workspaceDefaultPolicyIds };
}

function sameSet(a: string[], b: string[]): boolean {
  const sa = new Set(a);
  return sa.size === new Set(b).size && b.every((x) => sa.has(x));
}

/** Expected and stored states are equal when their flags and id sets are (id order does not matter). */
export function sameState(a: AssignmentState, b: AssignmentState): boolean {
  return (
    a.optedOut === b.optedOut &&
    sameSet(a.policyIds, b.policyIds) &&
    sameSet(a.workspaceDefaultPolicyIds, b.workspaceDefaultPolicyIds)
  );
}

/** Subjects of a default policy that hold another policy of its type directly. */
export function overridden(doc: PolicyDoc, p: StoredPolicy, kind: SubjectKind): string[] {
  if (!p.isWorkspaceDefault) return [];
  const out = new Set<string>();
  for (const other of doc.policies) {
    if (other.id === p.id || other.policyType !== p.policyType) continue;
    for (const s of directList(other, kind)) out.add(s);
  }
  return [...out].sort();
}

function without(list: string[], subject: string): string[] {
  return list.filter((s) => s !== subject);
}

function withSubject(list: string[], subject: string): string[] {
  return list.includes(subject) ? list : [...list, subject];
}

function setLists(
  p: StoredPolicy,
  kind: SubjectKind,
  direct: string[],
  optedOut: string[],
): StoredPolicy {
  return kind === "api_key"
    ? { ...p, apiKeyHashes: direct, optedOutApiKeyHashes: optedOut }
    : { ...p, memberIds: direct, optedOutMemberIds: optedOut };
}

/**
 * The document after assigning (or removing) `policy` for a subject. A subject holds at most one
 * policy of a type directly, so assigning moves it off any other; assigning the workspace
 * default clears an opt-out of it, and removing the default opts the subject out of it.
 */
export function changedAssignment(
  doc: PolicyDoc,
  policy: StoredPolicy,
  kind: SubjectKind,
  subject: string,
  assigned: boolean,
  nowMs: number,
): PolicyDoc {
  const policies = doc.policies.map((p) => {
    if (p.policyType !== policy.policyType) return p;
    const direct = directList(p, kind);
    const optedOut = optedOutList(p, kind);
    let nextDirect = direct;
    let nextOptedOut = optedOut;
    if (p.id === policy.id) {
      if (assigned) {
        nextDirect = withSubject(direct, subject);
        nextOptedOut = without(optedOut, subject);
      } else {
        nextDirect = without(direct, subject);
        if (p.isWorkspaceDefault) nextOptedOut = withSubject(optedOut, subject);
      }
    } else if (assigned) {
      nextDirect = without(direct, subject);
    }
    if (nextDirect === direct && nextOptedOut === optedOut) return p;
    if (nextDirect.length === direct.length && nextOptedOut.length === optedOut.length) return p;
    return { ...setLists(p, kind, nextDirect, nextOptedOut), updatedAtMs: nowMs };
  });
  return { ...doc, policies };
}
