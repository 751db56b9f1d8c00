import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type { ContentReplaySchema } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { CompiledFilters } from "../../governance/filters/compiled-filters.js";
import { applyFilters } from "../../governance/filters/off-thread.js";
import { effectivePolicy } from "../../governance/policy/effective-policy.js";
import type { AccountSettings, FilterRuleSpec } from "../../governance/policy/types.js";
import {
  type ContentOutcome,
  decideFromDetections,
  outcomeOfFilters,
} from "../../governance/replay-data/detections.js";
import { openInput } from "../../governance/replay-data/sealed-input.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { detectionGroups, sealedRecords } from "../../store/request-log/replay-inputs.js";

const BUILTINS = "content_filter_builtins";
const CUSTOM = "content_filters";

/** What a content-filter replay reads beside the two versions. */
export interface ContentReplayDeps {
  database: SqlDatabase;
  account: AccountSettings;
  /** RAILGATE_REPLAY_DATA_KEY: opens the kept inputs; without it they count as not replayed. */
  replayDataKey?: Buffer;
}

/** The window and the records' labels, as the rest of the replay reads them. */
export interface ContentWindow {
  workspaceId: string;
  guardrailId: string;
  labels: readonly string[];
  fromMs: number;
  toMs: number;
  nowMs: number;
}

/** What the content filters of the proposed version change, added to the replay's answer. */
export interface ContentReplayResult {
  changed: number;
  newlyRefused: number;
  newlyAllowed: number;
  newlyRedacted: number;
  newlyFlagged: number;
  /** Requests whose refusal the change turns (up to the caller's sample size). */
  sample: string[];
  fields: MessageInitShape<typeof ContentReplaySchema>[];
  notReplayed: { field: string; reason: string }[];
}

type Rules = readonly FilterRuleSpec[];

function rulesOf(g: Readonly<Guardrail>, account: AccountSettings): Rules {
  return effectivePolicy([{ source: "key", guardrail: g as Guardrail }], account).filters;
}

/** A field's rules in a form two versions compare by. */
function signature(rules: Rules, custom: boolean): string {
  return JSON.stringify(
    rules
      .filter((r) => (r.slug === "custom") === custom)
      .map((r) => [r.slug, r.action, r.label, r.pattern ?? "", r.scanScope ?? ""]),
  );
}

/** How the proposed version's content outcome compares with the current one's, request by request. */
class ContentTally {
  changed = 0;
  newlyRefused = 0;
  newlyAllowed = 0;
  newlyRedacted = 0;
  newlyFlagged = 0;
  readonly sample: string[] = [];

  constructor(private readonly sampleMax: number) {}

  add(before: ContentOutcome, after: ContentOutcome, n: number, id: string): void {
    if (before === after) return;
    if (before === "blocked" || after === "blocked") {
      this.changed += n;
      if (after === "blocked") this.newlyRefused += n;
      else this.newlyAllowed += n;
      if (this.sample.length < this.sampleMax) this.sample.push(id);
      return;
    }
    if (after === "redacted") this.newlyRedacted += n;
    else if (after === "flagged" && before === "allowed") this.newlyFlagged += n;
  }
}

/** Per field: how many requests were decided from what, and how many could not be. */
class FieldCounts {
  detections = 0;
  input = 0;
  noData = 0;
  onlyDetections = 0;
  sealedElsewhere = 0;

  total(): number {
    return this.detections + this.input + this.noData + this.onlyDetections + this.sealedElsewhere;
  }

  notReplayed(): number {
    return this.noData + this.onlyDetections + this.sealedElsewhere;
  }

  reason(): string {
    const total = this.total();
    const parts: string[] = [];
    if (this.noData > 0)
      parts.push(
        `${this.noData} of ${total} requests had no replay data (their workspace's replay_data was none, or their input had expired)`,
      );
    if (this.onlyDetections > 0)
      parts.push(
        `${this.onlyDetections} of ${total} requests kept only detections, which decide builtin filters, not custom patterns`,
      );
    if (this.sealedElsewhere > 0)
      parts.push(
        `${this.sealedElsewhere} of ${total} requests kept an input this deployment's RAILGATE_REPLAY_DATA_KEY does not open`,
      );
    return parts.join("; ");
  }
}

/**
 * Replays the content filters of `proposed` against those of `current` over the window's
 * requests that kept replay data (docs/guardrail-changes.md "Replay data"): an encrypted
 * input is decrypted and filtered by both versions' rules exactly, builtin and custom; a
 * record's detections decide the builtin rules (the strongest action of a rule whose detector
 * matched is the request's outcome, as the filters decide it). A request refused as recorded
 * by this guardrail's filters stays refused unless the proposed rules no longer block it.
 * Nothing is queried when the change leaves the content filters as they are.
 */
export async function replayContent(
  deps: ContentReplayDeps,
  current: Readonly<Guardrail>,
  proposed: Readonly<Guardrail>,
  window: ContentWindow,
  sampleMax: number,
): Promise<ContentReplayResult> {
  const tally = new ContentTally(sampleMax);
  const before = rulesOf(current, deps.account);
  const after = rulesOf(proposed, deps.account);
  const builtinsChanged = signature(before, false) !== signature(after, false);
  const customChanged = signature(before, true) !== signature(after, true);
  const result = (fields: [string, FieldCounts][]): ContentReplayResult => ({
    changed: tally.changed,
    newlyRefused: tally.newlyRefused,
    newlyAllowed: tally.newlyAllowed,
    newlyRedacted: tally.newlyRedacted,
    newlyFlagged: tally.newlyFlagged,
    sample: tally.sample,
    fields: fields.map(([field, c]) => ({
      field,
      fromDetections: BigInt(c.detections),
      fromEncryptedInput: BigInt(c.input),
      notReplayed: BigInt(c.notReplayed()),
      reason: c.reason(),
    })),
    notReplayed: fields
      .filter(([, c]) => c.notReplayed() > 0)
      .map(([field, c]) => ({ field, reason: c.reason() })),
  });
  if (!builtinsChanged && !customChanged) return result([]);
  const builtins = new FieldCounts();
  const custom = new FieldCounts();
  const w = window;
  const groups = await detectionGroups(
    deps.database,
    w.workspaceId,
    w.guardrailId,
    w.labels,
    w.fromMs,
    w.toMs,
    w.nowMs,
  );
  for (const g of groups) {
    if (g.detections === null) {
      builtins.noData += g.count;
      custom.noData += g.count;
      continue;
    }
    const was = decideFromDetections(before, g.detections);
    // Refused as recorded by a custom pattern the detections cannot see: it blocks still,
    // unless the custom patterns change, which only an input could decide.
    const blockedByCustom = g.blocked && was !== "blocked";
    custom.onlyDetections += g.count;
    if (blockedByCustom && customChanged) {
      builtins.onlyDetections += g.count;
      continue;
    }
    builtins.detections += g.count;
    const now = blockedByCustom ? "blocked" : decideFromDetections(after, g.detections);
    tally.add(g.blocked ? "blocked" : was, now, g.count, g.someId);
  }
  const sealed = sealedRecords(
    deps.database,
    w.workspaceId,
    w.guardrailId,
    w.labels,
    w.fromMs,
    w.toMs,
    w.nowMs,
  );
  const key = deps.replayDataKey;
  let compiled: { before: CompiledFilters; after: CompiledFilters } | undefined;
  for await (const page of sealed) {
    compiled ??= {
      before: CompiledFilters.compile([...before]),
      after: CompiledFilters.compile([...after]),
    };
    for (const r of page) {
      const parts = key && openInput(key, r.id, r.sealed);
      if (!parts) {
        builtins.sealedElsewhere++;
        custom.sealedElsewhere++;
        continue;
      }
      builtins.input++;
      custom.input++;
      const was = r.blocked
        ? "blocked"
        : outcomeOfFilters(await applyFilters(compiled.before, parts));
      const now = outcomeOfFilters(await applyFilters(compiled.after, parts));
      tally.add(was, now, 1, r.id);
    }
  }
  return result([
    ...(builtinsChanged ? ([[BUILTINS, builtins]] as [string, FieldCounts][]) : []),
    ...(customChanged ? ([[CUSTOM, custom]] as [string, FieldCounts][]) : []),
  ]);
}
