import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import {
  ReplayRefusal,
  type SimulateGuardrailResponse,
  SimulateGuardrailResponseSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import type { DataPolicy } from "../../gen/railgate/speech/v1/speech_pb.js";
import { DataPolicySchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import { GuardrailReplay, type ReplayRule } from "../../governance/guardrail-replay.js";
import type { AccountSettings, GuardrailSource } from "../../governance/policy/types.js";
import type { ModelCatalog } from "../../platform/catalog/model-catalog.js";
import { GUARDRAIL_SOURCES } from "../../platform/guardrail-sources.js";
import { regionName } from "../../platform/regions.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { replayRows } from "../../store/request-log/replay-rows.js";

const DAY_MS = 86_400_000;
/** The answer's sample of affected generation ids, and its list of entities whose spend moves. */
const SAMPLE_MAX = 20;
const SPEND_MAX = 100;

/** What a replay needs beside the guardrail: the request log, the catalog, the account. */
export interface SimulationDeps {
  database: SqlDatabase;
  catalog: ModelCatalog;
  account: AccountSettings;
  /** RAILGATE_LOG_RETENTION_DAYS: how far back the request log reaches. */
  retentionDays: number;
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

/** The content-filter rules of a version, which a replay cannot decide without the text. */
function unreplayedRules(g: Guardrail): { field: string; reason: string }[] {
  const reason =
    "content filters need the request's text, which the request log does not keep (replay_data: none)";
  return [
    ...((g.contentFilterBuiltins?.values.length ?? 0) > 0
      ? [{ field: "content_filter_builtins", reason }]
      : []),
    ...((g.contentFilters?.values.length ?? 0) > 0 ? [{ field: "content_filters", reason }] : []),
  ];
}

/**
 * Replays the requests `current` governed in [fromMs, toMs) under `proposed`, streaming the
 * records oldest first a page at a time, and adds up what would change.
 */
export async function simulate(
  deps: SimulationDeps,
  /** A key's member user id ("" for none), by key hash. */
  memberOf: (keyHash: string) => Promise<string>,
  current: Readonly<Guardrail>,
  proposed: Guardrail,
  fromMs: number,
  toMs: number,
): Promise<SimulateGuardrailResponse> {
  const replay = new GuardrailReplay(proposed, deps.catalog, deps.account);
  const sources = GUARDRAIL_SOURCES.names;
  const labels = sources.map((s) => `${s}:${current.id}`);
  // Looked up once per key: a window holds many requests of few keys.
  const members = new Map<string, string>();
  const member = async (hash: string): Promise<string> => {
    const m = await memberOf(hash);
    members.set(hash, m);
    return m;
  };
  let replayed = 0;
  let changed = 0;
  let newlyAllowed = 0;
  const refused = new Map<ReplayRule, number>();
  const sample: string[] = [];
  // Per entity: [recorded, replayed] spend in USD.
  const spend = new Map<string, [number, number]>();
  const addSpend = (entity: string, recorded: number, now: number) => {
    const s = spend.get(entity) ?? [0, 0];
    s[0] += recorded;
    s[1] += now;
    spend.set(entity, s);
  };
  for await (const page of replayRows(deps.database, current.workspaceId, labels, fromMs, toMs)) {
    for (const row of page) {
      const served = PASSED.has(row.status);
      if (!served && row.status !== "refused") continue;
      const memberId = members.get(row.keyHash) ?? (await member(row.keyHash));
      const result = replay.next({
        id: row.id,
        atMs: row.atMs,
        keyHash: row.keyHash,
        memberUserId: memberId,
        source: (sources[row.governedAs] ?? "key") as GuardrailSource,
        model: row.model,
        provider: row.provider,
        outcome: served ? "served" : "refused",
        refusalReason: row.refusalReason,
        decidedBy: row.decidedBy,
        byok: row.byok,
        costUsd: row.costUsd,
        characters: row.characters,
        region: regionName(row.dataRegion),
        endpointPolicy: dataPolicyOf(row.endpointPolicy),
      });
      replayed++;
      // Every request's spend, so an entity's move is stated against its whole recorded spend.
      if (result.recordedUsd !== 0 || result.replayedUsd !== 0) {
        addSpend(`key:${row.keyHash}`, result.recordedUsd, result.replayedUsd);
        if (memberId) addSpend(`member:${memberId}`, result.recordedUsd, result.replayedUsd);
      }
      const { before, after } = result;
      if (before.allowed === after.allowed) continue;
      changed++;
      if (sample.length < SAMPLE_MAX) sample.push(row.id);
      if (after.allowed) newlyAllowed++;
      else if (after.rule !== "other") refused.set(after.rule, (refused.get(after.rule) ?? 0) + 1);
    }
  }
  const moved = [...spend.entries()]
    .map(([entity, [recorded, now]]) => ({ entity, recorded, now }))
    .filter((s) => Math.abs(s.recorded - s.now) > 1e-12)
    .sort((a, b) => Math.abs(b.recorded - b.now) - Math.abs(a.recorded - a.now))
    .slice(0, SPEND_MAX);
  return create(SimulateGuardrailResponseSchema, {
    from: timestampFromMs(fromMs),
    to: timestampFromMs(toMs),
    requestsReplayed: BigInt(replayed),
    outcomesChanged: BigInt(changed),
    newlyRefused: [...refused.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([rule, count]) => ({ reason: REFUSAL_VALUE[rule], count: BigInt(count) })),
    newlyAllowed: BigInt(newlyAllowed),
    // Filter actions are decided from the text, which a replay does not have.
    newlyRedacted: 0n,
    newlyFlagged: 0n,
    spend: moved.map((s) => {
      const cut = s.entity.indexOf(":");
      return {
        entity: s.entity.slice(0, cut),
        subject: s.entity.slice(cut + 1),
        recordedUsd: s.recorded,
        replayedUsd: s.now,
      };
    }),
    affectedGenerationIds: sample,
    notReplayed: unreplayedRules(proposed),
  });
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
