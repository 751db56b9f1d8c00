import type { MessageInitShape } from "@bufbuild/protobuf";
import { UUID_INPUT_PATTERN } from "../../domain/ids.js";
import { WEBHOOK_LIMITS } from "../../domain/limits.js";
import {
  DeliveryStatus,
  type Webhook,
  type WebhookDelivery,
} from "../../gen/railgate/webhook/v1/webhook_pb.js";
import type {
  CreateWebhookRequestSchema,
  CreateWebhookResponse,
  ListWebhookDeliveriesRequestSchema,
  ListWebhookDeliveriesResponse,
  ListWebhooksRequestSchema,
  UpdateWebhookRequestSchema,
} from "../../gen/railgate/webhook/v1/webhook_service_pb.js";
import {
  BOOLEAN,
  DATE_TIME,
  INTEGER,
  type JsonSchema,
  NUMBER,
  orNull,
  STRING,
  shapeOf,
  specSchema,
} from "../openapi/spec-schema.js";
import {
  badRequest,
  checkElements,
  checkFields,
  checkQuery,
  has,
  queryInt,
  queryPage,
  type Spec,
} from "./fields.js";
import { isoOrNull } from "./proto-json.js";

type Json = Record<string, unknown>;

const L = WEBHOOK_LIMITS;

export function webhookToJson(w: Webhook) {
  return {
    id: w.id,
    workspace_id: w.workspaceId,
    url: w.url,
    thresholds_pct: [...w.thresholdsPct],
    credits_below_usd: w.creditsBelowUsd ?? null,
    enabled: w.enabled,
    secret_hint: w.secretHint,
    created_at: isoOrNull(w.createdAt) ?? "",
    updated_at: isoOrNull(w.updatedAt),
  };
}

/** A new webhook and its signing secret, which no other answer carries. */
export function createdWebhookToJson(res: CreateWebhookResponse) {
  return { data: res.webhook && webhookToJson(res.webhook), secret: res.secret };
}

const STATUS_NAMES = {
  [DeliveryStatus.UNSPECIFIED]: "pending",
  [DeliveryStatus.PENDING]: "pending",
  [DeliveryStatus.DELIVERED]: "delivered",
  [DeliveryStatus.FAILED]: "failed",
} as const;

export function deliveryToJson(d: WebhookDelivery) {
  return {
    id: d.id,
    webhook_id: d.webhookId,
    event_id: d.eventId,
    event_type: d.eventType,
    status: STATUS_NAMES[d.status],
    attempts: d.attempts,
    last_status_code: d.lastStatusCode ?? null,
    last_error: d.lastError || null,
    next_attempt_at: isoOrNull(d.nextAttemptAt),
    created_at: isoOrNull(d.createdAt) ?? "",
    delivered_at: isoOrNull(d.deliveredAt),
    payload: payloadOf(d.payload),
  };
}

/** The event as the receiver got it, as JSON again; null if it is not an object (never thrown). */
function payloadOf(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

/** A page of deliveries, newest first; next_cursor null on the last. */
export function deliveryPageToJson(res: ListWebhookDeliveriesResponse) {
  return { data: res.deliveries.map(deliveryToJson), next_cursor: res.nextCursor || null };
}

export const WEBHOOK_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof webhookToJson>>({
  id: { type: "string", format: "uuid" },
  workspace_id: { type: "string", format: "uuid" },
  url: STRING,
  thresholds_pct: { type: "array", items: INTEGER },
  credits_below_usd: orNull(NUMBER),
  enabled: BOOLEAN,
  secret_hint: STRING,
  created_at: DATE_TIME,
  updated_at: orNull(DATE_TIME),
});

export const CREATED_WEBHOOK_JSON_SCHEMA: JsonSchema = shapeOf<
  ReturnType<typeof createdWebhookToJson>
>({
  data: WEBHOOK_JSON_SCHEMA,
  secret: STRING,
});

export const DELIVERY_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof deliveryToJson>>({
  id: { type: "string", format: "uuid" },
  webhook_id: { type: "string", format: "uuid" },
  event_id: STRING,
  event_type: {
    enum: [
      "budget.threshold",
      "budget.exhausted",
      "credits.low",
      "guardrail.shadow_expired",
      "guardrail_policy.shadow_expired",
      "account_policy.shadow_expired",
      "webhook.test",
    ],
  },
  status: { enum: ["pending", "delivered", "failed"] },
  attempts: INTEGER,
  last_status_code: orNull(INTEGER),
  last_error: orNull(STRING),
  next_attempt_at: orNull(DATE_TIME),
  created_at: DATE_TIME,
  delivered_at: orNull(DATE_TIME),
  payload: orNull({ type: "object" }),
});

export const DELIVERY_PAGE_JSON_SCHEMA: JsonSchema = shapeOf<ReturnType<typeof deliveryPageToJson>>(
  {
    data: { type: "array", items: DELIVERY_JSON_SCHEMA },
    next_cursor: orNull(STRING),
  },
);

export const WEBHOOK_LIST_QUERY = ["workspace_id", "offset", "limit"] as const;
export const WEBHOOK_LIST_QUERY_RULES: Record<string, JsonSchema> = {
  workspace_id: { type: "string", pattern: UUID_INPUT_PATTERN },
};

/** GET /webhooks's query -> ListWebhooksRequest. */
export function listWebhooksRequestFromQuery(
  q: URLSearchParams,
): MessageInitShape<typeof ListWebhooksRequestSchema> {
  checkQuery(q, WEBHOOK_LIST_QUERY);
  return { ...queryPage(q), workspaceId: q.get("workspace_id") ?? undefined };
}

export const DELIVERIES_QUERY = ["cursor", "limit"] as const;
export const DELIVERIES_QUERY_RULES: Record<string, JsonSchema> = {
  limit: { type: "integer", minimum: 1, maximum: L.deliveries.pageMax },
  cursor: { type: "string", maxLength: 200 },
};

/** GET /webhooks/:id/deliveries's query -> ListWebhookDeliveriesRequest. */
export function deliveriesRequestFromQuery(
  webhookId: string,
  q: URLSearchParams,
): MessageInitShape<typeof ListWebhookDeliveriesRequestSchema> {
  checkQuery(q, DELIVERIES_QUERY);
  const limit = queryInt(q, "limit");
  if (q.has("limit") && limit === 0)
    throw badRequest(`limit must be an integer from 1 to ${L.deliveries.pageMax}`);
  return { webhookId, cursor: q.get("cursor") ?? "", limit };
}

/** The fields every write takes; their value rules are the service's (services/webhooks/validation.ts). */
const WRITABLE: Spec = {
  // Its length and scheme are stated in words: a string of the maximum length is no URL.
  url: { type: "string" },
  secret: {
    type: "string",
    rules: { minLength: L.secretMin, maxLength: L.secretMax, pattern: "^[\\x21-\\x7e]+$" },
  },
  thresholds_pct: {
    type: "array",
    rules: {
      maxItems: L.thresholdsMax,
      uniqueItems: true,
      items: { type: "integer", minimum: L.thresholdMin, maximum: L.thresholdMax },
    },
  },
  credits_below_usd: {
    type: "number",
    nullable: true,
    rules: { minimum: 0, maximum: L.creditsBelowUsdMax },
  },
  enabled: { type: "boolean" },
};

const CREATE_SPEC: Spec = {
  workspace_id: { type: "string", rules: { format: "uuid" } },
  ...WRITABLE,
};

export const CREATE_WEBHOOK_BODY_SCHEMA: JsonSchema = specSchema(CREATE_SPEC, {
  required: ["url"],
});
export const UPDATE_WEBHOOK_BODY_SCHEMA: JsonSchema = specSchema(WRITABLE);

/** thresholds_pct holds integers (the service checks their range and count). */
function checkWriteBody(body: Json, spec: Spec): void {
  checkFields(body, spec);
  if (Array.isArray(body.thresholds_pct))
    checkElements("thresholds_pct", body.thresholds_pct, "int32");
}

/** The writable fields (checked) as both requests carry them. */
function writableFromJson(body: Json) {
  return {
    url: body.url as string | undefined,
    secret: body.secret as string | undefined,
    thresholdsPct: has(body, "thresholds_pct")
      ? { values: body.thresholds_pct as number[] }
      : undefined,
    creditsBelowUsd: (body.credits_below_usd as number | null | undefined) ?? undefined,
    enabled: body.enabled as boolean | undefined,
  };
}

/** POST /webhooks's body -> CreateWebhookRequest. */
export function createWebhookRequestFromJson(
  body: Json,
): MessageInitShape<typeof CreateWebhookRequestSchema> {
  checkWriteBody(body, CREATE_SPEC);
  if (!has(body, "url")) throw badRequest("url is required");
  return {
    workspaceId: (body.workspace_id as string | undefined) ?? "",
    ...writableFromJson(body),
  };
}

/**
 * PATCH /webhooks/:id's body -> UpdateWebhookRequest. The keys present are the mask; an empty
 * one is the service's to refuse.
 */
export function updateWebhookRequestFromJson(
  id: string,
  body: Json,
): MessageInitShape<typeof UpdateWebhookRequestSchema> {
  checkWriteBody(body, WRITABLE);
  return { id, ...writableFromJson(body), updateMask: { paths: Object.keys(body) } };
}
