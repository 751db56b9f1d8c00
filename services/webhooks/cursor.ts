import { isUuid } from "../../domain/ids.js";
import { invalidArgument } from "../../platform/rpc/errors.js";
import type { DeliveryCursor } from "../../store/webhooks/types.js";

/**
 * Deliveries page newest first by (created_at, id): the cursor is the last
 * row of a page, opaque to clients (base64url), so a page never repeats or
 * skips rows that arrived meanwhile, as an offset would.
 */
export function encodeCursor(last: { createdAt: Date; id: string }): string {
  return Buffer.from(`${last.createdAt.getTime()}.${last.id}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): DeliveryCursor {
  const bad = () => invalidArgument("cursor must be a next_cursor this API answered");
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw bad();
  const [ms, id, ...rest] = Buffer.from(cursor, "base64url").toString("utf8").split(".");
  if (rest.length > 0 || !ms || !/^\d{1,15}$/.test(ms) || !id || !isUuid(id)) throw bad();
  return { createdAt: new Date(Number(ms)), id };
}
