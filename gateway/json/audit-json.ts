import type { JsonObject, MessageInitShape } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AUDIT_RESOURCE_TYPES } from "../../domain/audit.js";
import { AUDIT_LIMITS } from "../../domain/limits.js";
import type {
  ListAuditEventsRequestSchema,
  ListAuditEventsResponse,
} from "../../gen/railgate/account/v1/account_service_pb.js";
import type { AuditEvent } from "../../gen/railgate/account/v1/audit_pb.js";
import { quote } from "../../platform/quote.js";
import {
  arrayOf,
  BOOLEAN,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  orNull,
  STRING,
  shapeOf,
} from "../openapi/spec-schema.js";
import { badRequest, checkQuery, queryInt } from "./fields.js";
import { INSTANT_PATTERN, parseInstant } from "./instant.js";
import { isoOrNull } from "./proto-json.js";

/** One event as the API answers it (GET /audit-log; the CLI prints the same). */
export function auditEventToJson(e: AuditEvent) {
  return {
    id: e.id,
    at: isoOrNull(e.at) ?? "",
    actor: {
      key_hash: e.actor?.keyHash ?? "",
      label: e.actor?.label ?? "",
      name: e.actor?.name ?? "",
    },
    action: e.action,
    resource: {
      type: e.resource?.type ?? "",
      id: e.resource?.id ?? "",
      label: e.resource?.label ?? null,
    },
    workspace_id: e.workspaceId ?? null,
    changes: (e.changes ?? {}) as JsonObject,
    request_id: e.requestId ?? null,
  };
}

/** A page of events, newest first; next_cursor null on the last. */
export function auditPageToJson(res: ListAuditEventsResponse) {
  return {
    data: res.events.map(auditEventToJson),
    next_cursor: res.nextCursor || null,
    total_count: Number(res.totalCount),
    total_count_is_estimate: res.totalCountIsEstimate,
  };
}

type EventJson = ReturnType<typeof auditEventToJson>;

const EVENT_SCHEMA: JsonSchema = shapeOf<EventJson>({
  id: STRING,
  at: DATE_TIME,
  actor: shapeOf<EventJson["actor"]>({
    key_hash: { type: "string", pattern: "^[0-9a-f]{64}$" },
    label: STRING,
    name: STRING,
  }),
  action: STRING,
  resource: shapeOf<EventJson["resource"]>({
    type: { enum: [...AUDIT_RESOURCE_TYPES] },
    id: STRING,
    label: orNull(STRING),
  }),
  workspace_id: orNull(STRING),
  changes: {
    type: "object",
    description:
      "Only the fields that changed, each { before, after } (null = absent); never a secret",
    additionalProperties: shapeOf<{ before: unknown; after: unknown }>({ before: {}, after: {} }),
  },
  request_id: orNull(STRING),
});

/** What auditPageToJson renders. */
export const AUDIT_PAGE_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof auditPageToJson>>({
  data: arrayOf(EVENT_SCHEMA),
  next_cursor: orNull(STRING),
  total_count: INTEGER,
  total_count_is_estimate: BOOLEAN,
});

export const AUDIT_QUERY = [
  "action",
  "resource_type",
  "resource_id",
  "actor",
  "workspace_id",
  "from",
  "to",
  "cursor",
  "limit",
  "q",
] as const;

/** The rules the service applies to each filter, stated for the document from its constants. */
export const AUDIT_QUERY_RULES: Record<string, JsonSchema> = {
  action: {
    type: "string",
    maxLength: AUDIT_LIMITS.actionMax,
    pattern: "^[a-z][a-z_]*\\.[a-z][a-z_]*$",
    description: '"<resource>.<verb>", e.g. "key.create", "guardrail.update", "credits.add"',
  },
  resource_type: { type: "string", enum: [...AUDIT_RESOURCE_TYPES] },
  resource_id: { type: "string", maxLength: AUDIT_LIMITS.resourceIdMax },
  actor: {
    type: "string",
    pattern: "^[0-9a-f]{64}$",
    description: "The hash of the management key that made the change",
  },
  workspace_id: { type: "string", format: "uuid" },
  from: {
    type: "string",
    pattern: INSTANT_PATTERN,
    description: "ISO 8601 instant or UTC day; inclusive",
  },
  to: {
    type: "string",
    pattern: INSTANT_PATTERN,
    description: "ISO 8601 instant or UTC day; exclusive",
  },
  cursor: { type: "string", description: "The previous page's next_cursor" },
  limit: { type: "integer", minimum: 1, maximum: AUDIT_LIMITS.pageMax },
  q: {
    type: "string",
    maxLength: AUDIT_LIMITS.searchMax,
    description: "Part of an action, a resource's id or name, or the actor's name",
  },
};

function instant(params: URLSearchParams, name: string): Timestamp | undefined {
  const raw = params.get(name);
  if (raw === null) return undefined;
  const at = parseInstant(raw);
  if (!at) {
    throw badRequest(
      `${name} must be an ISO 8601 instant with its zone (2026-11-26T08:00:00Z) or a UTC day (2026-11-26), got ${quote(raw)}`,
    );
  }
  return timestampFromDate(at);
}

/** GET /audit-log's query -> ListAuditEventsRequest (the service checks the filters' rules). */
export function listAuditEventsRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof ListAuditEventsRequestSchema> {
  checkQuery(q, AUDIT_QUERY);
  // 0 means "the default" on the wire: an explicit 0 is refused here.
  const limit = queryInt(q, "limit");
  if (q.has("limit") && (limit < 1 || limit > AUDIT_LIMITS.pageMax)) {
    throw badRequest(`limit must be an integer from 1 to ${AUDIT_LIMITS.pageMax}`);
  }
  return {
    action: q.get("action") ?? "",
    resourceType: q.get("resource_type") ?? "",
    resourceId: q.get("resource_id") ?? "",
    actor: q.get("actor") ?? "",
    workspaceId: q.get("workspace_id") ?? "",
    from: instant(q, "from"),
    to: instant(q, "to"),
    cursor: q.get("cursor") ?? "",
    limit,
    q: q.get("q") ?? "",
  };
}
