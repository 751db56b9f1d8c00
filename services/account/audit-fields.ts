import type { JsonValue } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { KEY_LIMIT_RESETS, REPLAY_DATA_MODES } from "../../domain/enums.js";
import { replayDataDaysOf, replayDataOf } from "../../domain/replay-data.js";
import { type ApiKey, KeyKind, type Workspace } from "../../gen/railgate/account/v1/account_pb.js";

/**
 * What the audit log compares before and after a write, field by field, in the API's names
 * and shapes (so an operator reads a change as they would have sent it). Never the secret: a
 * key is its hash (the resource id) and these fields.
 */
export function keyAuditFields(k: ApiKey): Record<string, JsonValue> {
  return {
    name: k.name,
    kind: k.kind === KeyKind.MANAGEMENT ? "management" : "standard",
    workspace_id: k.workspaceId || null,
    member_user_id: k.memberUserId || null,
    disabled: k.disabled,
    limit: k.limit ?? null,
    limit_reset: KEY_LIMIT_RESETS.name(k.limitReset) ?? null,
    include_byok_in_limit: k.includeByokInLimit,
    expires_at: k.expiresAt ? timestampDate(k.expiresAt).toISOString() : null,
    rate_limit_per_minute: k.rateLimitPerMinute ?? null,
  };
}

export function workspaceAuditFields(w: Workspace): Record<string, JsonValue> {
  // As the API shows it: an empty description is null.
  return {
    name: w.name,
    slug: w.slug,
    description: w.description || null,
    audio_cache: w.audioCache,
    replay_data: REPLAY_DATA_MODES.name(replayDataOf(w)) ?? "none",
    replay_data_days: replayDataDaysOf(w),
  };
}
