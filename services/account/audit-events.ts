import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import { AUDIT_LIMITS } from "../../domain/limits.js";
import type { ListAuditEventsRequest } from "../../gen/railgate/account/v1/account_service_pb.js";
import { type AuditEvent, AuditEventSchema } from "../../gen/railgate/account/v1/audit_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { withReason } from "../../platform/rpc/errors.js";
import { cursorPageSize } from "../../platform/rpc/request-rules.js";
import type { AuditLog, AuditEvent as StoredEvent } from "../../store/request-log/audit-log.js";
import { isDatabaseUnavailable } from "../../store/request-log/unavailable.js";
import { STORE_RETRY_AFTER_SECONDS } from "../../store/store-availability.js";
import { decodeCursor, encodeCursor } from "./audit-cursor.js";

/**
 * The request's filters as the audit log reads them; the request rules
 * (request-rules.ts) have checked each, with the same words for HTTP and gRPC callers.
 */
function query(req: ListAuditEventsRequest) {
  return {
    action: req.action || undefined,
    resourceType: req.resourceType || undefined,
    resourceId: req.resourceId || undefined,
    actor: req.actor || undefined,
    workspaceId: req.workspaceId || undefined,
    from: req.from && timestampDate(req.from),
    to: req.to && timestampDate(req.to),
    after: req.cursor ? decodeCursor(req.cursor) : undefined,
    limit: cursorPageSize(req.limit, AUDIT_LIMITS),
    search: req.q.trim() || undefined,
  };
}

function toProto(e: StoredEvent): AuditEvent {
  return create(AuditEventSchema, {
    id: e.id,
    at: timestampFromDate(e.at),
    actor: e.actor,
    action: e.action,
    resource: {
      type: e.resource.type,
      id: e.resource.id,
      label: e.resource.label ?? undefined,
    },
    workspaceId: e.workspaceId ?? undefined,
    changes: e.changes as JsonObject,
    requestId: e.requestId ?? undefined,
  });
}

/** AccountService.ListAuditEvents. Without the database the audit log is unavailable (503). */
export async function listAuditEvents(audit: AuditLog | undefined, req: ListAuditEventsRequest) {
  const q = query(req);
  if (!audit) {
    throw withReason(
      Code.Unavailable,
      ErrorReason.STORE_UNAVAILABLE,
      "The audit log is not available: this process runs without the request-log database",
    );
  }
  const unavailable = (err: unknown): never => {
    // The database away is a 503 worth retrying; anything else stays an internal error.
    if (!isDatabaseUnavailable(err)) throw err;
    throw withReason(
      Code.Unavailable,
      ErrorReason.STORE_UNAVAILABLE,
      "The audit log's database is not answering; retry shortly (writes are still recorded once it is back)",
      STORE_RETRY_AFTER_SECONDS,
    );
  };
  const { events, more } = await audit.list(q).catch(unavailable);
  const count = await audit.count(q).catch(unavailable);
  const last = events.at(-1);
  return {
    events: events.map(toProto),
    nextCursor: more && last ? encodeCursor(last) : "",
    totalCount: BigInt(count.total),
    totalCountIsEstimate: count.estimate,
  };
}
