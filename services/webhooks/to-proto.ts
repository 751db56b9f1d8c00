import { create } from "@bufbuild/protobuf";
import {
  DeliveryStatus,
  type Webhook,
  type WebhookDelivery,
  WebhookDeliverySchema,
  WebhookSchema,
} from "../../gen/railgate/webhook/v1/webhook_pb.js";
import { timestampFromMs } from "../../platform/time.js";
import type { DeliveryRecord, WebhookRecord } from "../../store/webhooks/types.js";
import { secretHint } from "./validation.js";

const STATUS = {
  pending: DeliveryStatus.PENDING,
  delivered: DeliveryStatus.DELIVERED,
  failed: DeliveryStatus.FAILED,
} as const;

const ts = (d: Date | null) => (d ? timestampFromMs(d.getTime()) : undefined);

export function webhookToProto(w: WebhookRecord): Webhook {
  return create(WebhookSchema, {
    id: w.id,
    workspaceId: w.workspaceId,
    url: w.url,
    thresholdsPct: w.thresholdsPct,
    creditsBelowUsd: w.creditsBelowUsd ?? undefined,
    enabled: w.enabled,
    secretHint: secretHint(w.secret),
    createdAt: ts(w.createdAt),
    updatedAt: ts(w.updatedAt),
  });
}

export function deliveryToProto(d: DeliveryRecord): WebhookDelivery {
  return create(WebhookDeliverySchema, {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: STATUS[d.status],
    attempts: d.attempts,
    lastStatusCode: d.lastStatusCode ?? undefined,
    lastError: d.lastError ?? "",
    nextAttemptAt: ts(d.nextAttemptAt),
    createdAt: ts(d.createdAt),
    deliveredAt: ts(d.deliveredAt),
    payload: d.body,
  });
}
