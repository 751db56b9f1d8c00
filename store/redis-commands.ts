import type { Cluster, Redis, RedisCommander, RedisKey, Result } from "ioredis";
import { withConfigOutbox } from "./config-outbox/outbox-lua.js";
import * as lua from "./redis-scripts.js";

/**
 * The Lua scripts as ioredis commands. Each is declared on ioredis'
 * RedisCommander (so clients, Clusters, pipelines and transactions all carry
 * it), with its KEYS then ARGV as a labelled tuple in the order the script's
 * comment in redis-scripts.ts gives, and its reply as the script builds it.
 * A script whose key count is fixed is defined with numberOfKeys; ASSIGN,
 * whose count varies, takes it as its first argument. Where arguments carry
 * lists and their counts (ADMIT_GROUP, SETTLE_GROUP, ASSIGN, PATCH_GUARDRAIL),
 * a packer below lays them out from an object, so a count never disagrees
 * with its list.
 * ioredis does not check replies: each reply type restates what its script
 * returns, and redis-replies.ts reads it once into the store's own types.
 */

/**
 * A management script's arguments in the outbox wrapper (config-outbox/outbox-lua.ts): the
 * scope's outbox first, then the script's own, then the event's JSON ("" records nothing) and
 * the snapshot spec.
 */
export type Outboxed<A extends unknown[]> = [
  outbox: RedisKey,
  ...args: A,
  event: string,
  snapshots: string,
];

/** A guardrail field as a script takes it: (field number, encoding) pairs, flattened. */
export type FieldArg = number | Buffer;
type Flag = "1" | "0";

export type ClaimWorkspaceArgs = [
  workspaces: RedisKey,
  createdAtMs: number,
  id: string,
  limit: number,
];
export type CreateGuardrailArgs = [
  workspace: RedisKey,
  guardrail: RedisKey,
  index: RedisKey,
  createdAtMs: number,
  id: string,
  defaultId: string,
  limit: number,
  /** The policy document's version the create was decided under; -1 = unchecked. */
  policyDocVersion: number,
  ...fields: FieldArg[],
];
export type PatchGuardrailArgs = [
  workspace: RedisKey,
  guardrail: RedisKey,
  index: RedisKey,
  readVersion: number,
  materialize: Flag,
  createdAtMs: number,
  id: string,
  written: number,
  guarded: number,
  /** The policy document's version the patch was decided under; -1 = unchecked. */
  policyDocVersion: number,
  ...fields: FieldArg[],
];
export type DeleteGuardrailArgs = [
  guardrail: RedisKey,
  index: RedisKey,
  keyAssignments: RedisKey,
  memberAssignments: RedisKey,
  keyAssignmentIndex: RedisKey,
  memberAssignmentIndex: RedisKey,
  guardrailKeyAssignments: RedisKey,
  guardrailMemberAssignments: RedisKey,
  id: string,
];
export type CreateKeyArgs = [
  workspace: RedisKey,
  key: RedisKey,
  index: RedisKey,
  enabledIndex: RedisKey,
  data: Buffer,
  createdAtMs: number,
  hash: string,
  requireWorkspace: Flag,
  enabled: Flag,
  limit: number,
];
export type PutKeyArgs = [
  key: RedisKey,
  index: RedisKey,
  enabledIndex: RedisKey,
  data: Buffer,
  hash: string,
  enabled: Flag,
];
export type DeleteKeyArgs = [
  key: RedisKey,
  index: RedisKey,
  enabledIndex: RedisKey,
  keyAssignments: RedisKey,
  keyAssignmentIndex: RedisKey,
  hash: string,
  scopePrefix: string,
];
export type UnassignArgs = [
  assignments: RedisKey,
  index: RedisKey,
  guardrailIndex: RedisKey,
  guardrailId: string,
  ...subjects: string[],
];
export type LoadGovernanceArgs = [
  key: RedisKey,
  keyAssignments: RedisKey,
  memberAssignments: RedisKey,
  hash: string,
  memberUserId: string,
  scopePrefix: string,
  defaultGuardrailId: string,
];
export type DeleteWorkspaceArgs = [
  workspace: RedisKey,
  guardrailIndex: RedisKey,
  keyIndex: RedisKey,
  keyAssignments: RedisKey,
  memberAssignments: RedisKey,
  enabledKeyIndex: RedisKey,
  keyAssignmentIndex: RedisKey,
  memberAssignmentIndex: RedisKey,
  members: RedisKey,
  policies: RedisKey,
  scopePrefix: string,
];
export type AddMembersArgs = [
  workspace: RedisKey,
  members: RedisKey,
  limit: number,
  ...records: string[],
];
export type RemoveMembersArgs = [members: RedisKey, ...userIds: string[]];
export type PutWorkspaceArgs = [workspace: RedisKey, data: Buffer, mode: "xx" | ""];
export type AddCreditsArgs = [credits: RedisKey, creditsAdded: RedisKey, micros: number];
/** Variable key counts: numKeys, the outbox, the fixed keys, then what the packer lays out. */
export type AssignArgs = [
  numKeys: number,
  outbox: RedisKey,
  guardrail: RedisKey,
  assignments: RedisKey,
  index: RedisKey,
  ...checksThenArgv: (RedisKey | number)[],
];
/** One script for a group of requests of a scope: its credits key, prefix, then what the packer lays out. */
export type AdmitGroupArgs = [
  credits: RedisKey,
  scopePrefix: string,
  counterTtlSeconds: number,
  daysKept: number,
  ...requests: (string | number | Buffer)[],
];
export type GuardrailSpendArgs = [
  spendIndex: RedisKey,
  scopePrefix: string,
  ...guardrailIdFirstDayLastDay: (string | number)[],
];
export type SettleGroupArgs = [
  credits: RedisKey,
  scopePrefix: string,
  markerTtlSeconds: number,
  ...windowsThenRequests: (string | number | Buffer)[],
];
export type KeepReservationsArgs = [
  scopePrefix: string,
  ...reservations: (string | number | Buffer)[],
];
export type ExpiredReservationsArgs = [
  leaseIndex: RedisKey,
  scopePrefix: string,
  nowMs: number,
  max: number,
];
export type OutboxRecordsArgs = [
  outboxIndex: RedisKey,
  scopePrefix: string,
  beforeMs: number,
  max: number,
];
export type OutboxDoneArgs = [outboxIndex: RedisKey, scopePrefix: string, ...ids: string[]];

/** Scripts that count what exists against a limit answer with the count when it is reached. */
export type CountedReply<Refusal extends string = never> =
  | ["ok"]
  | [Refusal]
  | ["limit", count: number];
/** Status first, as bytes: the guardrail after it is protobuf, so the reply is read as Buffers. */
export type PatchGuardrailReply = [status: Buffer, version?: number, guardrail?: Buffer];
/** Removed/written: 1, nothing to do: 0. */
export type Done = 0 | 1;
/** The number assigned, -1 for a missing guardrail, or [-2, count, adding] past the limit. */
export type AssignReply = number | [-2, count: number, adding: number];
/** Empty when the key is gone; otherwise protobuf bytes ("" = none). */
export type LoadGovernanceReply =
  | []
  | [key: Buffer, keyGuardrail: Buffer, memberGuardrail: Buffer, defaultGuardrail: Buffer];
export type DeleteWorkspaceReply =
  | null
  | ["active-keys", count: number]
  | ["ok", guardrailIds: string[], keyHashes: string[]];
export type AdmitReply =
  | ["ok", metered: Done, rateUsed: number]
  | ["rate-limit", pttl: number]
  | ["credits", balanceMicros: number]
  | ["budget", budgetIndex: number, spentMicros: number]
  | ["key-limit", spentMicros: number]
  /** That request alone met an error (a counter of the wrong type): the others were admitted. */
  | ["error", message: string];

declare module "ioredis" {
  interface RedisCommander<Context> {
    rgClaimWorkspace(...args: ClaimWorkspaceArgs): Result<CountedReply, Context>;
    rgCreateGuardrail(
      ...args: Outboxed<CreateGuardrailArgs>
    ): Result<CountedReply<"exists" | "missing-workspace" | "conflict">, Context>;
    rgPatchGuardrailBuffer(
      ...args: Outboxed<PatchGuardrailArgs>
    ): Result<PatchGuardrailReply, Context>;
    rgDeleteGuardrail(...args: Outboxed<DeleteGuardrailArgs>): Result<Done, Context>;
    rgCreateKey(
      ...args: Outboxed<CreateKeyArgs>
    ): Result<CountedReply<"exists" | "missing-workspace">, Context>;
    rgPutKey(...args: Outboxed<PutKeyArgs>): Result<Done, Context>;
    rgDeleteKey(...args: Outboxed<DeleteKeyArgs>): Result<Done, Context>;
    rgAssign(...args: AssignArgs): Result<AssignReply, Context>;
    rgUnassign(...args: Outboxed<UnassignArgs>): Result<number, Context>;
    /** The number added, -1 for a missing workspace, or [-2, count, adding] past the limit. */
    rgAddMembers(...args: Outboxed<AddMembersArgs>): Result<AssignReply, Context>;
    rgRemoveMembers(...args: Outboxed<RemoveMembersArgs>): Result<number, Context>;
    rgLoadGovernanceBuffer(...args: LoadGovernanceArgs): Result<LoadGovernanceReply, Context>;
    rgPutWorkspace(...args: Outboxed<PutWorkspaceArgs>): Result<Done, Context>;
    rgAddCredits(
      ...args: Outboxed<AddCreditsArgs>
    ): Result<["ok", balance: number, wasMetered: Done], Context>;
    rgDeleteWorkspace(
      ...args: Outboxed<DeleteWorkspaceArgs>
    ): Result<DeleteWorkspaceReply, Context>;
    /** One reply per request, in order. */
    rgAdmitGroup(...args: AdmitGroupArgs): Result<AdmitReply[], Context>;
    /** Per request: 1 applied, 0 a repeated admission id (skipped), or the error it alone met. */
    rgSettleGroup(...args: SettleGroupArgs): Result<(number | string)[], Context>;
    /** How many of the reservations were still held (the others were settled meanwhile). */
    rgKeepReservations(...args: KeepReservationsArgs): Result<number, Context>;
    /** Per expired reservation: id, metered flag + admission JSON, settlement JSON, record. */
    rgExpiredReservationsBuffer(...args: ExpiredReservationsArgs): Result<Buffer[], Context>;
    /** id, record pairs. */
    rgOutboxRecordsBuffer(...args: OutboxRecordsArgs): Result<Buffer[], Context>;
    rgOutboxDone(...args: OutboxDoneArgs): Result<number, Context>;
    rgAddCreditsOnce(
      ...args: Outboxed<
        [
          credits: RedisKey,
          creditsAdded: RedisKey,
          marker: RedisKey,
          micros: number,
          ttlSeconds: number,
        ]
      >
    ): Result<["ok", balance: number, wasMetered: Done] | ["repeat", balance: number], Context>;
    rgClaimIdempotency(
      record: RedisKey,
      fingerprint: string,
      token: string,
      claimMs: number,
    ): Result<string[], Context>;
    rgCompleteIdempotency(
      record: RedisKey,
      token: string,
      status: number,
      body: string,
      ttlMs: number,
    ): Result<Done, Context>;
    rgReleaseIdempotency(record: RedisKey, token: string): Result<Done, Context>;
    /** Per guardrail, in order: keys' total, members' total, largest entity, entities. */
    rgGuardrailSpend(...args: GuardrailSpendArgs): Result<number[], Context>;
  }
}

/** The commands declared above, without ioredis' "Buffer" twin suffix. */
type Declared = Extract<keyof RedisCommander, `rg${string}`>;
type CommandName = Declared extends infer N ? (N extends `${infer B}Buffer` ? B : N) : never;

/**
 * One definition per declared command: a declaration left without its script
 * (or the reverse) does not compile. numberOfKeys is absent where it varies.
 */
const COMMANDS: Record<CommandName, { lua: string; numberOfKeys?: number }> = {
  rgClaimWorkspace: { lua: lua.CLAIM_WORKSPACE, numberOfKeys: 1 },
  rgCreateGuardrail: { lua: withConfigOutbox(lua.CREATE_GUARDRAIL), numberOfKeys: 4 },
  rgPatchGuardrail: { lua: withConfigOutbox(lua.PATCH_GUARDRAIL), numberOfKeys: 4 },
  rgDeleteGuardrail: { lua: withConfigOutbox(lua.DELETE_GUARDRAIL), numberOfKeys: 9 },
  rgCreateKey: { lua: withConfigOutbox(lua.CREATE_KEY), numberOfKeys: 5 },
  rgPutKey: { lua: withConfigOutbox(lua.PUT_KEY), numberOfKeys: 4 },
  rgDeleteKey: { lua: withConfigOutbox(lua.DELETE_KEY), numberOfKeys: 6 },
  rgAssign: { lua: withConfigOutbox(lua.ASSIGN) },
  rgUnassign: { lua: withConfigOutbox(lua.UNASSIGN), numberOfKeys: 4 },
  rgLoadGovernance: { lua: lua.LOAD_GOVERNANCE, numberOfKeys: 3 },
  rgDeleteWorkspace: { lua: withConfigOutbox(lua.DELETE_WORKSPACE), numberOfKeys: 11 },
  rgAddMembers: { lua: withConfigOutbox(lua.ADD_MEMBERS), numberOfKeys: 3 },
  rgRemoveMembers: { lua: withConfigOutbox(lua.REMOVE_MEMBERS), numberOfKeys: 2 },
  rgPutWorkspace: { lua: withConfigOutbox(lua.PUT_WORKSPACE), numberOfKeys: 2 },
  rgAddCredits: { lua: withConfigOutbox(lua.ADD_CREDITS), numberOfKeys: 3 },
  rgAdmitGroup: { lua: lua.ADMIT_GROUP, numberOfKeys: 1 },
  rgSettleGroup: { lua: lua.SETTLE_GROUP, numberOfKeys: 1 },
  rgGuardrailSpend: { lua: lua.GUARDRAIL_SPEND, numberOfKeys: 1 },
  rgKeepReservations: { lua: lua.KEEP_RESERVATIONS, numberOfKeys: 1 },
  rgExpiredReservations: { lua: lua.EXPIRED_RESERVATIONS, numberOfKeys: 1 },
  rgOutboxRecords: { lua: lua.OUTBOX_RECORDS, numberOfKeys: 1 },
  rgOutboxDone: { lua: lua.OUTBOX_DONE, numberOfKeys: 1 },
  rgAddCreditsOnce: { lua: withConfigOutbox(lua.ADD_CREDITS_ONCE), numberOfKeys: 4 },
  rgClaimIdempotency: { lua: lua.CLAIM_IDEMPOTENCY, numberOfKeys: 1 },
  rgCompleteIdempotency: { lua: lua.COMPLETE_IDEMPOTENCY, numberOfKeys: 1 },
  rgReleaseIdempotency: { lua: lua.RELEASE_IDEMPOTENCY, numberOfKeys: 1 },
};

/** Defines every script on a client (a Cluster routes each call by its first key's slot). */
export function defineCommands(client: Redis | Cluster): void {
  for (const [name, definition] of Object.entries(COMMANDS)) client.defineCommand(name, definition);
}

/** (field number, encoding) pairs as script arguments. */
export function fieldArgs(pairs: [number, Uint8Array][]): FieldArg[] {
  return pairs.flatMap(([n, bytes]) => [
    n,
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  ]);
}

export interface PatchCall {
  keys: { workspace: RedisKey; guardrail: RedisKey; index: RedisKey };
  readVersion: number;
  createdAtMs: number;
  id: string;
  /** Fields to write. */
  written: [number, Uint8Array][];
  /** Fields that must still be stored as they were read. */
  guarded: [number, Uint8Array][];
  /** A workspace default: when it is missing, it is created whole from these fields. */
  materialize?: [number, Uint8Array][];
  /** The policy document's version the patch was decided under; absent = unchecked. */
  policyDocVersion?: number;
}

export function patchArgs(c: PatchCall): PatchGuardrailArgs {
  const { workspace, guardrail, index } = c.keys;
  return [
    workspace,
    guardrail,
    index,
    c.readVersion,
    c.materialize ? "1" : "0",
    c.createdAtMs,
    c.id,
    c.written.length,
    c.guarded.length,
    c.policyDocVersion ?? -1,
    ...fieldArgs(c.written),
    ...fieldArgs(c.guarded),
    ...(c.materialize ? fieldArgs(c.materialize) : []),
  ];
}

export interface AssignCall {
  keys: { outbox: RedisKey; guardrail: RedisKey; assignments: RedisKey; index: RedisKey };
  /** Per record, the key that must still exist for it to be assigned. */
  checks: RedisKey[];
  guardrailId: string;
  /** The scope prefix and the kind's tag: the script appends ":g:<guardrail id>". */
  guardrailIndexStem: string;
  limit: number;
  /** JSON, one per distinct subject, in the order of `checks`. */
  records: string[];
  /** The outbox wrapper's event and snapshot spec. */
  event: string;
  snapshots: string;
}

export function assignArgs(c: AssignCall): AssignArgs {
  const { outbox, guardrail, assignments, index } = c.keys;
  return [
    4 + c.checks.length,
    outbox,
    guardrail,
    assignments,
    index,
    ...c.checks,
    c.guardrailId,
    c.guardrailIndexStem,
    c.limit,
    ...c.records,
    c.event,
    c.snapshots,
  ];
}

/** The entity of the request's own key, which the scripts spell out from its hash. */
const OWN_KEY = "k";

/** One request of an admission group, with its key names reduced to what the script cannot derive. */
export interface AdmitItem {
  keyHash: string;
  /** Absent: no rate limit. */
  rate?: { limit: number; windowIndex: number; windowRemainingMs: number };
  creditMicros: number;
  /** Absent: the key has no limit of its own. */
  keyLimitMicros?: number;
  keyMicros: number;
  /** The key limit's window (its id, e.g. "daily:2026-11-26", and ttl); absent: all-time. */
  keyWindow?: { id: string; ttlSeconds: number };
  /** The key limit counts the BYOK spend of its window too (include_byok_in_limit). */
  keyLimitIncludesByok: boolean;
  budgets: {
    guardrailId: string;
    entity: string;
    limitMicros: number;
    amountMicros: number;
    firstDay: number;
    day: number;
  }[];
  /** Registers the reservation for recovery (store/reservations.ts); absent: untracked. */
  tracked?: { id: string; leaseUntilMs: number; admission: string; record: Buffer };
}

export interface AdmitGroupCall {
  credits: RedisKey;
  scopePrefix: string;
  counterTtlSeconds: number;
  daysKept: number;
  items: AdmitItem[];
}

export function admitGroupArgs(c: AdmitGroupCall): AdmitGroupArgs {
  const args: (string | number | Buffer)[] = [];
  for (const a of c.items) {
    args.push(
      a.keyHash,
      a.rate?.limit ?? 0,
      a.rate?.windowIndex ?? 0,
      a.rate?.windowRemainingMs ?? 0,
      a.creditMicros,
      a.keyLimitMicros ?? -1,
      a.keyMicros,
      a.keyWindow?.id ?? "",
      Math.max(1, a.keyWindow?.ttlSeconds ?? 0),
      a.budgets.length,
      a.tracked?.id ?? "",
      a.tracked?.leaseUntilMs ?? 0,
      a.tracked?.admission ?? "",
      a.tracked?.record ?? "",
      a.keyLimitIncludesByok ? 1 : 0,
    );
    for (const b of a.budgets) {
      args.push(
        b.guardrailId,
        b.entity === `key:${a.keyHash}` ? OWN_KEY : b.entity,
        b.limitMicros,
        b.amountMicros,
        b.firstDay,
        b.day,
      );
    }
  }
  return [c.credits, c.scopePrefix, c.counterTtlSeconds, c.daysKept, ...args];
}

/** The key limit's windows, as SETTLE_GROUP numbers them (0: none). */
const WINDOW_NUMBER = { daily: 1, weekly: 2, monthly: 3 } as const;

/** One request of a settlement group. */
export interface SettleItem {
  /** Settle at most once per id; absent: always apply. */
  id?: string;
  keyHash: string;
  metered: boolean;
  creditRefundMicros: number;
  keyDeltaMicros: number;
  /** The real cost on credits and through BYOK, added to the key's usage counters of now. */
  creditMicros: number;
  byokMicros: number;
  /** The key limit's window counter, which holds the reservation: the difference goes there. */
  keyWindow?: { interval: keyof typeof WINDOW_NUMBER; id: string; deltaMicros: number };
  /** Deltas applied to the day each reservation was charged to (zero ones can be left out). */
  budgets: { guardrailId: string; entity: string; day: number; deltaMicros: number }[];
  /** Applies only while its reservation is registered for recovery (removing it). */
  tracked: boolean;
  /** The request's record, put in the outbox as the counters move. */
  record?: Buffer;
}

export interface SettleGroupCall {
  credits: RedisKey;
  scopePrefix: string;
  markerTtlSeconds: number;
  /** The usage windows of now: daily, weekly, monthly. */
  windows: { id: string; ttlSeconds: number }[];
  nowMs: number;
  items: SettleItem[];
}

export function settleGroupArgs(c: SettleGroupCall): SettleGroupArgs {
  const args: (string | number | Buffer)[] = c.windows.flatMap((w) => [w.id, w.ttlSeconds]);
  args.push(c.nowMs);
  for (const s of c.items) {
    args.push(
      s.id ?? "",
      s.metered ? "1" : "0",
      s.creditRefundMicros,
      s.keyDeltaMicros,
      s.keyHash,
      s.creditMicros,
      s.byokMicros,
      s.keyWindow ? WINDOW_NUMBER[s.keyWindow.interval] : 0,
      s.keyWindow?.id ?? "",
      s.keyWindow?.deltaMicros ?? 0,
      s.budgets.length,
      s.tracked ? "1" : "0",
      s.record ?? "",
    );
    for (const b of s.budgets) {
      args.push(
        b.guardrailId,
        b.entity === `key:${s.keyHash}` ? OWN_KEY : b.entity,
        b.day,
        b.deltaMicros,
      );
    }
  }
  return [c.credits, c.scopePrefix, c.markerTtlSeconds, ...args];
}
