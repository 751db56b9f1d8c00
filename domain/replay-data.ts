import { ReplayData, type Workspace } from "../gen/railgate/account/v1/account_pb.js";

/** The longest a workspace may keep its requests' encrypted input (replay_data_days). */
export const REPLAY_DATA_DAYS_MAX = 30;
/** replay_data_days when a workspace never set it. */
export const REPLAY_DATA_DAYS_DEFAULT = 7;

/** A workspace's replay_data as enforcement reads it: a workspace stored before it had one keeps none. */
export function replayDataOf(w: Pick<Workspace, "replayData">): ReplayData {
  return w.replayData === ReplayData.UNSPECIFIED ? ReplayData.NONE : w.replayData;
}

/** A workspace's replay_data_days, defaulted. */
export function replayDataDaysOf(w: Pick<Workspace, "replayDataDays">): number {
  return w.replayDataDays > 0 ? w.replayDataDays : REPLAY_DATA_DAYS_DEFAULT;
}
