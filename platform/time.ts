import { timestampFromMs, timestampMs } from "@bufbuild/protobuf/wkt";

export { timestampFromMs, timestampMs };

/** The current time as a protobuf Timestamp (injectable clocks stay easy to add here). */
export function nowTimestamp() {
  return timestampFromMs(Date.now());
}
