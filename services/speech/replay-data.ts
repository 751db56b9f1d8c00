import type { TextPart } from "../../governance/filters/index.js";
import type { Principal } from "../../governance/governance-cache.js";
import type { EffectivePolicy } from "../../governance/policy/types.js";
import { detectBuiltins } from "../../governance/replay-data/detections.js";
import { sealInput } from "../../governance/replay-data/sealed-input.js";
import type { RecordReplayData } from "../../store/request-log/generations.js";

const DAY_MS = 86_400_000;

/** Whether any guardrail of the request enforces zero data retention, for any vendor. */
function enforcesZdr(policy: EffectivePolicy): boolean {
  for (const on of Object.values(policy.zdr)) if (on) return true;
  return false;
}

/**
 * What a record of a workspace that keeps replay data keeps (docs/guardrail-changes.md
 * "Replay data"); called only for such workspaces, after the request's answer is decided.
 * - detections: every builtin detector's matches in the text as the client sent it.
 * - encrypted_input: the text itself, sealed with RAILGATE_REPLAY_DATA_KEY until
 *   replay_data_days after the request; never when its guardrails enforce zero data retention
 *   or the request asked for it (nor without a key here): those keep detections instead,
 *   which hold no text.
 */
export function replayDataFor(
  principal: Principal,
  parts: TextPart[],
  record: { id: string; createdAtMs: number },
  zdrRequested: boolean,
  key: Buffer | undefined,
): Promise<RecordReplayData> {
  const wanted = principal.replayData;
  if (
    wanted?.mode === "encrypted_input" &&
    key !== undefined &&
    !zdrRequested &&
    !enforcesZdr(principal.policy)
  ) {
    return Promise.resolve({
      input: {
        sealed: sealInput(key, record.id, parts),
        untilMs: record.createdAtMs + wanted.days * DAY_MS,
      },
    });
  }
  return detectBuiltins(parts).then((detections) => ({ detections }));
}
