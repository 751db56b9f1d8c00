import { create } from "@bufbuild/protobuf";
import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";
import { membershipId } from "../../domain/ids.js";
import {
  type WorkspaceMember,
  WorkspaceMemberRole,
  WorkspaceMemberSchema,
} from "../../gen/railgate/account/v1/account_pb.js";
import type { MemberRecord, Store } from "../../store/types.js";

/**
 * Workspace members. Railgate keeps no organization roster: a member is a user id, and a
 * workspace's members are the users added to it (stored, through the config outbox) together
 * with the users the workspace already names: the owner (member_user_id) of any of its keys, the
 * subject of a member guardrail assignment, or a member id of one of its guardrail policies.
 * Those implicit members are listed because a member assignment there can govern them; they
 * are derived on each listing, never stored, so they come and go with what names them.
 */

/** Every member is a plain member: there is no organization role to inherit (OpenRouter's rule). */
export const MEMBER_ROLE = "member" as const;

const READ_PAGE = 500;
/** A listing reads at most this many keys and member assignments of the workspace. */
const MAX_READ = 10_000;

/** The users a workspace names outside its added members, each with when it first named them. */
async function implicitMembers(store: Store, workspaceId: string): Promise<Map<string, number>> {
  const named = new Map<string, number>();
  const note = (userId: string, atMs: number) => {
    if (!userId) return;
    const seen = named.get(userId);
    if (seen === undefined || atMs < seen) named.set(userId, atMs);
  };
  for (let at = 0; at < MAX_READ; at += READ_PAGE) {
    const page = await store.listKeys(workspaceId, at, READ_PAGE, false);
    for (const k of page.items) note(k.memberUserId, k.createdAt ? timestampMs(k.createdAt) : 0);
    if (page.items.length < READ_PAGE || at + READ_PAGE >= page.total) break;
  }
  for (let at = 0; at < MAX_READ; at += READ_PAGE) {
    const page = await store.listAssignments("member", workspaceId, undefined, at, READ_PAGE);
    for (const a of page.items) note(a.subject, a.createdAtMs);
    if (page.items.length < READ_PAGE || at + READ_PAGE >= page.total) break;
  }
  const { doc } = await store.openPolicyDocs().read(workspaceId);
  for (const p of doc.policies) {
    for (const m of [...p.memberIds, ...p.optedOutMemberIds]) note(m, p.updatedAtMs);
  }
  return named;
}

export function memberToProto(
  workspaceId: string,
  userId: string,
  createdAtMs: number,
  implicit: boolean,
): WorkspaceMember {
  return create(WorkspaceMemberSchema, {
    id: membershipId(workspaceId, userId),
    userId,
    workspaceId,
    role: WorkspaceMemberRole.MEMBER,
    createdAt: timestampFromMs(createdAtMs),
    implicit,
  });
}

export function recordToProto(r: MemberRecord): WorkspaceMember {
  return memberToProto(r.workspaceId, r.userId, r.createdAtMs, false);
}

/**
 * Every member of the workspace, added or implicit (an added member is listed once, as added),
 * ordered by when it became one, then by user id.
 */
export async function allMembers(store: Store, workspaceId: string): Promise<WorkspaceMember[]> {
  const [added, implicit] = await Promise.all([
    store.listMembers(workspaceId),
    implicitMembers(store, workspaceId),
  ]);
  const out = added.map(recordToProto);
  const addedIds = new Set(added.map((r) => r.userId));
  for (const [userId, atMs] of implicit) {
    if (!addedIds.has(userId)) out.push(memberToProto(workspaceId, userId, atMs, true));
  }
  const ms = (m: WorkspaceMember) => (m.createdAt ? timestampMs(m.createdAt) : 0);
  return out.sort(
    (a, b) => ms(a) - ms(b) || (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0),
  );
}

/** The users among `userIds` who own an enabled key of the workspace, in the order asked. */
export async function ownersOfEnabledKeys(
  store: Store,
  workspaceId: string,
  userIds: readonly string[],
): Promise<string[]> {
  const asked = new Set(userIds);
  const owners = new Set<string>();
  for (let at = 0; at < MAX_READ; at += READ_PAGE) {
    const page = await store.listKeys(workspaceId, at, READ_PAGE, true);
    for (const k of page.items) if (asked.has(k.memberUserId)) owners.add(k.memberUserId);
    if (page.items.length < READ_PAGE || at + READ_PAGE >= page.total) break;
  }
  return userIds.filter((u) => owners.has(u));
}

/** The user ids in the order first given, each once. */
export function distinct(userIds: readonly string[]): string[] {
  return [...new Set(userIds)];
}
