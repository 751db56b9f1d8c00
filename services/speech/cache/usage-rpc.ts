import { ErrorReason } from "../../../gen/railgate/common/v1/error_info_pb.js";
import { quote } from "../../../platform/quote.js";
import { invalidArgument, notFound } from "../../../platform/rpc/errors.js";
import type { Store } from "../../../store/types.js";
import type { AudioCache } from "./audio-cache.js";

/** GetAudioCache: a workspace's clips and counts (management key; the interceptor checked it). */
export async function audioCacheUsage(
  store: Store,
  cache: AudioCache | undefined,
  workspaceId: string,
) {
  if (!workspaceId) throw invalidArgument("workspace_id is required");
  if (!(await store.getWorkspace(workspaceId)))
    throw notFound(ErrorReason.WORKSPACE_NOT_FOUND, `workspace ${quote(workspaceId)} not found`);
  const u = cache
    ? await cache.usage(workspaceId)
    : { clips: 0, bytes: 0, budgetBytes: 0, hits: 0, misses: 0, collapsed: 0 };
  return {
    clips: BigInt(u.clips),
    bytes: BigInt(u.bytes),
    budgetBytes: BigInt(u.budgetBytes),
    hits: BigInt(u.hits),
    collapsed: BigInt(u.collapsed),
    misses: BigInt(u.misses),
  };
}
