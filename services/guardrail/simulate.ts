import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import { GUARDRAIL_SOURCES, regionName } from "../../domain/enums.js";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  ReplayRefusal,
  type SimulateGuardrailResponse,
  SimulateGuardrailResponseSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { DataPolicy } from "../../gen/railgate/speech/v1/speech_pb.js";
import { DataPolicySchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  GuardrailReplay,
  type RecordedRequest,
  type ReplayedRequest,
  type ReplayRule,
} from "../../governance/guardrail-replay.js";
import type { AccountSettings, GuardrailSource } from "../../governance/policy/types.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { type BudgetGroup, replayBudget } from "../../store/request-log/replay-budget.js";
import { type ReplayGroup, replayGroups } from "../../store/request-log/replay-rows.js";
import { replayContent } from "./content-replay.js";

const DAY_MS = 86_400_000;
/** The answer's sample of affected generation ids, and its list of entities whose spend moves. */
const SAMPLE_MAX = 20;
const SPEND_MAX = 100;

/** What a replay needs beside the guardrail: the request log, the catalog, the account. */
export interface SimulationDeps {
  database: SqlDatabase;
  catalog: ModelCatalog;
  account: AccountSettings;
  /** RAILGATE_REQUEST_LOG_RETENTION_DAYS: how far back the request log reaches. */
  retentionDays: number;
  /** RAILGATE_REPLAY_DATA_KEY: opens the inputs kept for replays (content-replay.ts). */
  replayDataKey?: Buffer;
}

const REFUSAL_VALUE: Readonly<Record<ReplayRule, ReplayRefusal>> = {
  budget: ReplayRefusal.BUDGET,
  model: ReplayRefusal.MODEL,
  provider: ReplayRefusal.PROVIDER,
  region: ReplayRefusal.REGION,
  zdr: ReplayRefusal.ZDR,
  content: ReplayRefusal.CONTENT,
  data_policy: ReplayRefusal.DATA_POLICY,
};

/** Statuses of requests an endpoint was given (served, or tried and failed): policy let them through. */
const PASSED = new Set(["completed", "interrupted", "cancelled", "failed"]);

/** endpoint_policy's 16 values, each made once. */
const DATA_POLICIES: readonly DataPolicy[] = Array.from({ length: 16 }, (_, bits) =>
  create(DataPolicySchema, {
    zeroDataRetention: (bits & 1) !== 0,
    safetyRetention: (bits & 2) !== 0,
    trainsOnData: (bits & 4) !== 0,
    publishesPrompts: (bits & 8) !== 0,
  }),
);

function dataPolicyOf(bits: number | null): DataPolicy | undefined {
  return bits === null ? undefined : DATA_POLICIES[bits & 15];
}

/** The outcomes the budget decided differently: by "live>replayed" outcome, and a sample. */
export interface BudgetDifferences {
  changes: Map<string, number>;
  sample: string[];
}

/** What a replay adds up: counts, a sample, and spend per key and member. */
export class Tally {
  replayed = 0;
  changed = 0;
  newlyAllowed = 0;
  readonly refused = new Map<ReplayRule, number>();
  readonly sample: string[] = [];
  /** Per entity ("key:<hash>", "member:<id>"): [recorded, replayed] spend in USD. */
  readonly spend = new Map<string, [number, number]>();
  /** The changes a budget made (refused by it as replayed, or as recorded). */
  readonly budget: BudgetDifferences = { changes: new Map(), sample: [] };

  /** `budgetSampleMax`: how many ids of budget differences to keep (a caller may filter them). */
  constructor(private readonly budgetSampleMax = SAMPLE_MAX) {}

  /** `ids`: one or more of the `n` requests, for the sample. */
  add(
    r: ReplayedRequest,
    n: number,
    ids: string | readonly string[],
    keyHash: string,
    member: string,
  ): void {
    this.replayed += n;
    // Every request's spend, so an entity's move is stated against its whole recorded spend.
    if (r.recordedUsd !== 0 || r.replayedUsd !== 0) {
      this.addSpend(`key:${keyHash}`, r.recordedUsd, r.replayedUsd);
      if (member) this.addSpend(`member:${member}`, r.recordedUsd, r.replayedUsd);
    }
    const { before, after } = r;
    if (before.allowed === after.allowed) return;
    this.changed += n;
    const sampled = typeof ids === "string" ? [ids] : ids;
    for (const id of sampled) {
      if (this.sample.length >= SAMPLE_MAX) break;
      this.sample.push(id);
    }
    if (
      (!after.allowed && after.rule === "budget") ||
      (!before.allowed && before.rule === "budget")
    ) {
      const change = before.allowed ? "allowed>refused" : "refused>allowed";
      this.budget.changes.set(change, (this.budget.changes.get(change) ?? 0) + n);
      for (const id of sampled) {
        if (this.budget.sample.length >= this.budgetSampleMax) break;
        this.budget.sample.push(id);
      }
    }
    if (after.allowed) this.newlyAllowed += n;
    else if (after.rule !== "other")
      this.refused.set(after.rule, (this.refused.get(after.rule) ?? 0) + n);
  }

  private addSpend(entity: string, recorded: number, now: number): void {
    const s = this.spend.get(entity);
    if (s) {
      s[0] += recorded;
      s[1] += now;
    } else this.spend.set(entity, [recorded, now]);
  }
}

/**
 * Replays the requests `current` governed in [fromMs, toMs) under `proposed`. The database adds
 * the records up by key, day and everything a rule reads, and each group is decided once; the
 * budget windows whose candidate spend reaches the proposed limit are replayed by the database
 * (replay-budget.ts), which adds up each group's admitted and refused records, and hands over
 * one by one, oldest first, only those checked against two counters whose outcome depends on
 * which earlier ones were refused.
 */
export async function simulate(
  deps: SimulationDeps,
  /** A key's member user id ("" for none), by key hash. */
  memberOf: (keyHash: string) => Promise<string>,
  current: Readonly<Guardrail>,
  proposed: Guardrail,
  fromMs: number,
  toMs: number,
  /** The rules the replayed layer can give, when fewer than a guardrail's (a policy's type). */
  ownRules?: ReadonlySet<ReplayRule>,
  /**
   * Every entity's spend, moved or not, unbounded: for answers that are added up with others'
   * (an entity's move is stated against its whole recorded spend).
   */
  everySpend = false,
): Promise<SimulateGuardrailResponse> {
  const tally = await replayTally(
    deps,
    memberOf,
    current,
    proposed,
    fromMs,
    toMs,
    SAMPLE_MAX,
    ownRules,
  );
  // Content filters, from what the records kept for replays (content-replay.ts); a policy of
  // another type leaves them as they are, so it replays none. Spend and budgets are replayed as
  // if the content outcomes stayed as recorded.
  const content = await replayContent(
    deps,
    current,
    proposed,
    {
      workspaceId: current.workspaceId,
      guardrailId: current.id,
      labels: GUARDRAIL_SOURCES.names.map((s) => `${s}:${current.id}`),
      fromMs,
      toMs,
      nowMs: Date.now(),
    },
    SAMPLE_MAX,
  );
  if (content.newlyRefused > 0)
    tally.refused.set("content", (tally.refused.get("content") ?? 0) + content.newlyRefused);
  for (const id of content.sample) if (tally.sample.length < SAMPLE_MAX) tally.sample.push(id);
  const moved = [...tally.spend.entries()]
    .map(([entity, [recorded, now]]) => ({ entity, recorded, now }))
    .filter((s) => everySpend || Math.abs(s.recorded - s.now) > 1e-12)
    .sort((a, b) => Math.abs(b.recorded - b.now) - Math.abs(a.recorded - a.now))
    .slice(0, everySpend ? undefined : SPEND_MAX);
  return create(SimulateGuardrailResponseSchema, {
    from: timestampFromMs(fromMs),
    to: timestampFromMs(toMs),
    requestsReplayed: BigInt(tally.replayed),
    outcomesChanged: BigInt(tally.changed + content.changed),
    newlyRefused: [...tally.refused.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([rule, count]) => ({ reason: REFUSAL_VALUE[rule], count: BigInt(count) })),
    newlyAllowed: BigInt(tally.newlyAllowed + content.newlyAllowed),
    newlyRedacted: BigInt(content.newlyRedacted),
    newlyFlagged: BigInt(content.newlyFlagged),
    spend: moved.map((s) => {
      const cut = s.entity.indexOf(":");
      return {
        entity: s.entity.slice(0, cut),
        subject: s.entity.slice(cut + 1),
        recordedUsd: s.recorded,
        replayedUsd: s.now,
      };
    }),
    affectedGenerationIds: tally.sample,
    notReplayed: content.notReplayed,
    contentReplay: content.fields,
  });
}

/** The replay behind simulate, added up (a shadow's report reads its budget differences). */
export async function replayTally(
  deps: SimulationDeps,
  memberOf: (keyHash: string) => Promise<string>,
  current: Readonly<Guardrail>,
  proposed: Guardrail,
  fromMs: number,
  toMs: number,
  budgetSampleMax = SAMPLE_MAX,
  /** The rules the replayed layer can give, when fewer than a guardrail's (a policy's type). */
  ownRules?: ReadonlySet<ReplayRule>,
): Promise<Tally> {
  const replay = new GuardrailReplay(proposed, deps.catalog, deps.account, ownRules);
  const sources = GUARDRAIL_SOURCES.names;
  const labels = sources.map((s) => `${s}:${current.id}`);
  const groups = await replayGroups(
    deps.database,
    current.workspaceId,
    current.id,
    labels,
    fromMs,
    toMs,
  );
  const members = new Map<string, string>();
  for (const g of groups) {
    if (!members.has(g.keyHash)) members.set(g.keyHash, await memberOf(g.keyHash));
  }
  const tally = new Tally(budgetSampleMax);
  const request = (g: {
    keyHash: string;
    atMs: number;
    id: string;
    model: string;
    provider: string;
    status: string;
    refusalReason: string;
    decidedBy: string;
    byok: boolean;
    costUsd: number;
    characters: number;
    dataRegion: number;
    endpointPolicy: number | null;
    governedAs: number;
  }): RecordedRequest => ({
    id: g.id,
    atMs: g.atMs,
    keyHash: g.keyHash,
    memberUserId: members.get(g.keyHash) ?? "",
    source: (sources[g.governedAs] ?? "key") as GuardrailSource,
    model: g.model,
    provider: g.provider,
    outcome: PASSED.has(g.status) ? "served" : "refused",
    refusalReason: g.refusalReason,
    decidedBy: g.decidedBy,
    byok: g.byok,
    costUsd: g.costUsd,
    characters: g.characters,
    region: regionName(g.dataRegion),
    endpointPolicy: dataPolicyOf(g.endpointPolicy),
  });
  const replayable = (status: string) => PASSED.has(status) || status === "refused";
  // Groups decided whole; those the budget must decide wait for their window's total.
  const waiting: {
    g: ReplayGroup;
    r: RecordedRequest;
    before: ReplayedRequest["before"];
    usd: number;
  }[] = [];
  const totals = new Map<string, number>();
  for (const g of groups) {
    if (!replayable(g.status)) continue;
    const r = request({
      ...g,
      id: g.someId,
      atMs: g.day * DAY_MS,
      decidedBy: g.decidedHere ? current.id : "",
    });
    const pre = replay.decideBeforeBudget(r);
    if ("final" in pre) {
      tally.add(pre.final, g.count, g.someId, g.keyHash, r.memberUserId);
      continue;
    }
    waiting.push({ g, r, before: pre.before, usd: pre.candidateUsd });
    const window = replay.windowOfDay(g.day);
    for (const e of replay.entitiesOf(r.source, r.keyHash, r.memberUserId)) {
      const c = `${e}|${window}`;
      totals.set(c, (totals.get(c) ?? 0) + replay.chargedMicros(g.byok, pre.candidateUsd));
    }
  }
  // A window whose candidates add up to less than the limit admits every one of them, in any
  // order; the groups of one that reaches it go to the database's replay of the budget.
  const limit = replay.budgetLimitMicros ?? Number.POSITIVE_INFINITY;
  const overflowing: { w: (typeof waiting)[number]; budget: BudgetGroup }[] = [];
  for (const w of waiting) {
    const counters = replay.countersOf(w.r);
    if (!counters.some((c) => (totals.get(c) ?? 0) >= limit)) {
      const recordedUsd = w.r.outcome === "served" ? w.r.costUsd : 0;
      tally.add(
        { before: w.before, after: { allowed: true }, recordedUsd, replayedUsd: w.usd },
        w.g.count,
        w.g.someId,
        w.g.keyHash,
        w.r.memberUserId,
      );
      continue;
    }
    overflowing.push({
      w,
      budget: {
        group: w.g,
        counters: counters as [string] | [string, string],
        pricePerMillion: replay.pricePerMillion(w.r),
        charged: replay.chargedMicros(w.g.byok, 1) > 0,
      },
    });
  }
  await replayBudget(
    deps.database,
    current.workspaceId,
    current.id,
    labels,
    fromMs,
    toMs,
    limit,
    overflowing.map((o) => o.budget),
    (part) => {
      const o = overflowing[part.group];
      if (!o) return;
      const { w, budget } = o;
      const r = { ...w.r, id: part.id, costUsd: part.costUsd, characters: part.characters };
      if (part.kind === "ordered") {
        tally.add(replay.next({ ...r, atMs: part.atMs }), 1, part.id, w.g.keyHash, r.memberUserId);
        return;
      }
      const pre = replay.decideBeforeBudget(r);
      if ("final" in pre) return;
      const recordedUsd = r.outcome === "served" ? r.costUsd : 0;
      const admitted = part.kind === "admitted";
      if (admitted) for (const c of budget.counters) replay.charge(c, part.micros);
      tally.add(
        {
          before: pre.before,
          after: admitted ? { allowed: true } : { allowed: false, rule: "budget" },
          recordedUsd,
          replayedUsd: admitted ? pre.candidateUsd : 0,
        },
        part.count,
        part.ids,
        w.g.keyHash,
        r.memberUserId,
      );
    },
  );
  return tally;
}

/** The window asked for, defaulted and checked against the request log's retention. */
export function replayWindow(
  nowMs: number,
  retentionDays: number,
  fromMs: number | undefined,
  toMs: number | undefined,
): { fromMs: number; toMs: number } | { error: string } {
  const oldest = nowMs - retentionDays * DAY_MS;
  const to = toMs ?? nowMs;
  // The default week, shortened to what the log keeps.
  const from = fromMs ?? Math.max(to - 7 * DAY_MS, oldest);
  if (from >= to) return { error: "from must be before to" };
  if (from < oldest) {
    return {
      error: `from must be within the request log's retention of ${retentionDays} days (not before ${new Date(oldest).toISOString()})`,
    };
  }
  return { fromMs: from, toMs: to };
}
