import type { Cluster, Redis, RedisCommander, RedisKey, Result } from "ioredis";
import * as lua from "./redis-scripts.js";

/**
 * The Lua scripts as ioredis commands. Each is declared on ioredis'
 * RedisCommander (so clients, Clusters, pipelines and transactions all carry
 * it), with its KEYS then ARGV as a labelled tuple in the order the script's
 * comment in redis-scripts.ts gives, and its reply as the script builds it.
 * A script whose key count is fixed is defined with numberOfKeys; the three
 * whose count varies take it as their first argument. Where arguments carry
 * lists and their counts (ADMIT, SETTLE, ASSIGN, PATCH_GUARDRAIL), a packer
 * below lays them out from an object, so a count never disagrees with its list.
 * ioredis does not check replies: each reply type restates what its script
 * returns, and redis-replies.ts reads it once into the store's own types.
 */

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
export type IndexScopeArgs = [
  layout: RedisKey,
  keyIndex: RedisKey,
  enabledKeyIndex: RedisKey,
  keyAssignments: RedisKey,
  memberAssignments: RedisKey,
  keyAssignmentIndex: RedisKey,
  memberAssignmentIndex: RedisKey,
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
  layout: RedisKey,
  scopePrefix: string,
];
/** Variable key counts: numKeys, the fixed keys, then what the packer lays out. */
export type AssignArgs = [
  numKeys: number,
  guardrail: RedisKey,
  assignments: RedisKey,
  index: RedisKey,
  ...checksThenArgv: (RedisKey | number)[],
];
export type AdmitArgs = [
  numKeys: number,
  rate: RedisKey,
  credits: RedisKey,
  keySpend: RedisKey,
  spendIndex: RedisKey,
  ...budgetsThenArgv: (RedisKey | number | string)[],
];
export type GuardrailSpendArgs = [
  spendIndex: RedisKey,
  scopePrefix: string,
  ...guardrailIdFirstDayLastDay: (string | number)[],
];
export type SettleArgs = [
  numKeys: number,
  settled: RedisKey,
  credits: RedisKey,
  keySpend: RedisKey,
  record: RedisKey,
  ...countersThenArgv: (RedisKey | Buffer | number)[],
];

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
  | ["key-limit", spentMicros: number];

declare module "ioredis" {
  interface RedisCommander<Context> {
    rgClaimWorkspace(...args: ClaimWorkspaceArgs): Result<CountedReply, Context>;
    rgCreateGuardrail(
      ...args: CreateGuardrailArgs
    ): Result<CountedReply<"exists" | "missing-workspace">, Context>;
    rgPatchGuardrailBuffer(...args: PatchGuardrailArgs): Result<PatchGuardrailReply, Context>;
    rgDeleteGuardrail(...args: DeleteGuardrailArgs): Result<Done, Context>;
    rgCreateKey(
      ...args: CreateKeyArgs
    ): Result<CountedReply<"exists" | "missing-workspace">, Context>;
    rgPutKey(...args: PutKeyArgs): Result<Done, Context>;
    rgDeleteKey(...args: DeleteKeyArgs): Result<Done, Context>;
    rgIndexScope(...args: IndexScopeArgs): Result<Done, Context>;
    rgAssign(...args: AssignArgs): Result<AssignReply, Context>;
    rgUnassign(...args: UnassignArgs): Result<number, Context>;
    rgLoadGovernanceBuffer(...args: LoadGovernanceArgs): Result<LoadGovernanceReply, Context>;
    rgDeleteWorkspace(...args: DeleteWorkspaceArgs): Result<DeleteWorkspaceReply, Context>;
    rgAdmit(...args: AdmitArgs): Result<AdmitReply, Context>;
    rgSettle(...args: SettleArgs): Result<Done, Context>;
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
  rgCreateGuardrail: { lua: lua.CREATE_GUARDRAIL, numberOfKeys: 3 },
  rgPatchGuardrail: { lua: lua.PATCH_GUARDRAIL, numberOfKeys: 3 },
  rgDeleteGuardrail: { lua: lua.DELETE_GUARDRAIL, numberOfKeys: 8 },
  rgCreateKey: { lua: lua.CREATE_KEY, numberOfKeys: 4 },
  rgPutKey: { lua: lua.PUT_KEY, numberOfKeys: 3 },
  rgDeleteKey: { lua: lua.DELETE_KEY, numberOfKeys: 5 },
  rgIndexScope: { lua: lua.INDEX_SCOPE, numberOfKeys: 7 },
  rgAssign: { lua: lua.ASSIGN },
  rgUnassign: { lua: lua.UNASSIGN, numberOfKeys: 3 },
  rgLoadGovernance: { lua: lua.LOAD_GOVERNANCE, numberOfKeys: 3 },
  rgDeleteWorkspace: { lua: lua.DELETE_WORKSPACE, numberOfKeys: 9 },
  rgAdmit: { lua: lua.ADMIT },
  rgSettle: { lua: lua.SETTLE },
  rgGuardrailSpend: { lua: lua.GUARDRAIL_SPEND, numberOfKeys: 1 },
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
    ...fieldArgs(c.written),
    ...fieldArgs(c.guarded),
    ...(c.materialize ? fieldArgs(c.materialize) : []),
  ];
}

export interface AssignCall {
  keys: { guardrail: RedisKey; assignments: RedisKey; index: RedisKey };
  /** Per record, the key that must still exist for it to be assigned. */
  checks: RedisKey[];
  guardrailId: string;
  /** The scope prefix and the kind's tag: the script appends ":g:<guardrail id>". */
  guardrailIndexStem: string;
  limit: number;
  /** JSON, one per distinct subject, in the order of `checks`. */
  records: string[];
}

export function assignArgs(c: AssignCall): AssignArgs {
  const { guardrail, assignments, index } = c.keys;
  return [
    3 + c.checks.length,
    guardrail,
    assignments,
    index,
    ...c.checks,
    c.guardrailId,
    c.guardrailIndexStem,
    c.limit,
    ...c.records,
  ];
}

export interface AdmitCall {
  keys: { rate: RedisKey; credits: RedisKey; keySpend: RedisKey; spendIndex: RedisKey };
  /** Absent: no rate limit. */
  rate?: { limit: number; windowRemainingMs: number };
  creditMicros: number;
  /** Absent: the key has no limit of its own. */
  keyLimitMicros?: number;
  keyMicros: number;
  counterTtlSeconds: number;
  daysKept: number;
  budgets: {
    counter: RedisKey;
    limitMicros: number;
    amountMicros: number;
    firstDay: number;
    day: number;
    /** The counter's member in the spend index (guardrail id / entity). */
    indexMember: string;
  }[];
}

export function admitArgs(c: AdmitCall): AdmitArgs {
  const { rate, credits, keySpend, spendIndex } = c.keys;
  return [
    4 + c.budgets.length,
    rate,
    credits,
    keySpend,
    spendIndex,
    ...c.budgets.map((b) => b.counter),
    c.rate?.limit ?? 0,
    c.rate?.windowRemainingMs ?? 0,
    c.creditMicros,
    c.keyLimitMicros ?? -1,
    c.keyMicros,
    c.counterTtlSeconds,
    c.daysKept,
    ...c.budgets.flatMap((b) => [b.limitMicros, b.amountMicros, b.firstDay, b.day, b.indexMember]),
  ];
}

export interface SettleCall {
  keys: { credits: RedisKey; keySpend: RedisKey };
  /** Settle at most once: the admission id's marker, and how long it is remembered. */
  once?: { marker: RedisKey; ttlSeconds: number };
  /**
   * Where an admission without an id points its marker key, unused: every key
   * is listed, and must share the counters' hash tag.
   */
  placeholder: RedisKey;
  metered: boolean;
  creditRefundMicros: number;
  keyDeltaMicros: number;
  record?: { key: RedisKey; ttlSeconds: number; data: Uint8Array };
  usage: { counter: RedisKey; amountMicros: number; ttlSeconds: number }[];
  /** Applied to the day each reservation was charged to. */
  budgets: { counter: RedisKey; day: number; deltaMicros: number }[];
}

export function settleArgs(c: SettleCall): SettleArgs {
  const { credits, keySpend } = c.keys;
  const data = c.record?.data;
  return [
    4 + c.usage.length + c.budgets.length,
    c.once?.marker ?? c.placeholder,
    credits,
    keySpend,
    c.record?.key ?? c.placeholder,
    ...c.usage.map((u) => u.counter),
    ...c.budgets.map((b) => b.counter),
    c.once?.ttlSeconds ?? 0,
    c.metered ? "1" : "0",
    c.creditRefundMicros,
    c.keyDeltaMicros,
    c.record?.ttlSeconds ?? 0,
    data ? Buffer.from(data.buffer, data.byteOffset, data.byteLength) : "",
    c.usage.length,
    ...c.usage.flatMap((u) => [u.amountMicros, u.ttlSeconds]),
    ...c.budgets.flatMap((b) => [b.day, b.deltaMicros]),
  ];
}
