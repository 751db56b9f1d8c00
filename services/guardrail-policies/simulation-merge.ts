import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import {
  type ContentReplay,
  type ReplayRefusal,
  type SimulateGuardrailResponse,
  SimulateGuardrailResponseSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";

/** The answer's sample of affected generation ids, and its list of entities whose spend moves. */
const SAMPLE_MAX = 20;
const SPEND_MAX = 100;

type Counted = "fromDetections" | "fromEncryptedInput" | "notReplayed";

/** One workspace's replay, named by its workspace for the reasons that count requests. */
export interface WorkspaceSimulation {
  workspaceId: string;
  answer: SimulateGuardrailResponse;
}

/** Reasons of one field from several workspaces: each names its own counts, so each says where. */
function joinedReasons(parts: { workspaceId: string; reason: string }[]): string {
  const said = parts.filter((p) => p.reason !== "");
  if (said.length <= 1) return said[0]?.reason ?? "";
  return said.map((p) => `workspace ${p.workspaceId}: ${p.reason}`).join("; ");
}

/**
 * The replays of several workspaces as one answer: counts add up, and so does an entity's spend
 * (a key is in one workspace; a member's moves in each add to what the member would see). The
 * budgets themselves were replayed per workspace, as enforcement counts them.
 */
export function mergeSimulations(
  fromMs: number,
  toMs: number,
  parts: readonly WorkspaceSimulation[],
): SimulateGuardrailResponse {
  let replayed = 0n;
  let changed = 0n;
  let allowed = 0n;
  let redacted = 0n;
  let flagged = 0n;
  const refused = new Map<ReplayRefusal, bigint>();
  const spend = new Map<string, { entity: string; subject: string; rec: number; now: number }>();
  const sample: string[] = [];
  const unreplayed = new Map<string, { workspaceId: string; reason: string }[]>();
  const content = new Map<string, Pick<ContentReplay, Counted>>();
  const contentReasons = new Map<string, { workspaceId: string; reason: string }[]>();
  for (const { workspaceId, answer: a } of parts) {
    replayed += a.requestsReplayed;
    changed += a.outcomesChanged;
    allowed += a.newlyAllowed;
    redacted += a.newlyRedacted;
    flagged += a.newlyFlagged;
    for (const r of a.newlyRefused) refused.set(r.reason, (refused.get(r.reason) ?? 0n) + r.count);
    for (const s of a.spend) {
      const id = `${s.entity}:${s.subject}`;
      const e = spend.get(id);
      if (e) {
        e.rec += s.recordedUsd;
        e.now += s.replayedUsd;
      } else
        spend.set(id, {
          entity: s.entity,
          subject: s.subject,
          rec: s.recordedUsd,
          now: s.replayedUsd,
        });
    }
    for (const id of a.affectedGenerationIds) if (sample.length < SAMPLE_MAX) sample.push(id);
    for (const u of a.notReplayed) {
      const list = unreplayed.get(u.field) ?? [];
      if (!list.some((x) => x.reason === u.reason)) list.push({ workspaceId, reason: u.reason });
      unreplayed.set(u.field, list);
    }
    for (const c of a.contentReplay) {
      const e = content.get(c.field);
      const reasons = contentReasons.get(c.field) ?? [];
      reasons.push({ workspaceId, reason: c.reason });
      contentReasons.set(c.field, reasons);
      if (!e) {
        const { fromDetections, fromEncryptedInput, notReplayed } = c;
        content.set(c.field, { fromDetections, fromEncryptedInput, notReplayed });
        continue;
      }
      e.fromDetections += c.fromDetections;
      e.fromEncryptedInput += c.fromEncryptedInput;
      e.notReplayed += c.notReplayed;
    }
  }
  return create(SimulateGuardrailResponseSchema, {
    from: timestampFromMs(fromMs),
    to: timestampFromMs(toMs),
    requestsReplayed: replayed,
    outcomesChanged: changed,
    newlyRefused: [...refused.entries()]
      .sort((a, b) => (b[1] > a[1] ? 1 : b[1] < a[1] ? -1 : 0))
      .map(([reason, count]) => ({ reason, count })),
    newlyAllowed: allowed,
    newlyRedacted: redacted,
    newlyFlagged: flagged,
    spend: [...spend.values()]
      .filter((s) => Math.abs(s.rec - s.now) > 1e-12)
      .sort((a, b) => Math.abs(b.rec - b.now) - Math.abs(a.rec - a.now))
      .slice(0, SPEND_MAX)
      .map((s) => ({
        entity: s.entity,
        subject: s.subject,
        recordedUsd: s.rec,
        replayedUsd: s.now,
      })),
    affectedGenerationIds: sample,
    notReplayed: [...unreplayed.entries()].map(([field, reasons]) => ({
      field,
      reason: joinedReasons(reasons),
    })),
    contentReplay: [...content.entries()].map(([field, sum]) => ({
      field,
      ...sum,
      reason: joinedReasons(contentReasons.get(field) ?? []),
    })),
  });
}
