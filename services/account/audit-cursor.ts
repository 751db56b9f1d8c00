import { invalidArgument } from "../../platform/rpc/errors.js";
import type { AuditEvent as StoredEvent } from "../../store/request-log/audit-log.js";

/** An opaque page position of the audit log: the last event's time (ms) and id. */
export function encodeCursor(e: StoredEvent): string {
  return Buffer.from(`${e.at.getTime()}.${e.id}`, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string): { at: Date; id: string } {
  const text = /^[A-Za-z0-9_-]{1,200}$/.test(cursor)
    ? Buffer.from(cursor, "base64url").toString("utf8")
    : "";
  const m = /^(\d{1,15})\.([0-9a-f-]{36})$/.exec(text);
  if (!m) throw invalidArgument("cursor is not one this API returned: pass next_cursor as given");
  return { at: new Date(Number(m[1])), id: m[2] ?? "" };
}
