import type { ServiceImpl } from "@connectrpc/connect";
import { isUuid } from "../../domain/ids.js";
import { WEBHOOK_LIMITS } from "../../domain/limits.js";
import { page } from "../../domain/paging.js";
import {
  UpdateWebhookRequestSchema,
  WebhookService,
} from "../../gen/railgate/webhook/v1/webhook_service_pb.js";
import { quote } from "../../platform/quote.js";
import {
  cursorPage,
  fail,
  noRule,
  type RequestRules,
  withRequestRules,
} from "../../platform/rpc/request-rules.js";
import { type UpdateMaskRules, walkUpdateMask } from "../../platform/rpc/update-mask.js";
import { decodeCursor } from "./cursor.js";
import {
  checkCreditsBelow,
  checkSecret,
  checkThresholds,
  checkUrl,
  DEFAULT_THRESHOLDS_PCT,
} from "./validation.js";

/**
 * The webhook service's input rules, one per RPC, in the shape every service
 * states them (platform/rpc/request-rules.ts): every call is checked before its
 * handler runs, so a plain gRPC client and the gateway get the same refusal.
 * What needs the store (does the webhook or the workspace exist, is there
 * room for another webhook) is checked by the handler; an id that is no UUID
 * names no webhook, so it is not found there rather than refused here.
 */

/** What an update's mask may name, in the order the API lists them. */
export const WEBHOOK_UPDATE: UpdateMaskRules<typeof UpdateWebhookRequestSchema> = {
  values: UpdateWebhookRequestSchema,
  identity: ["id", "update_mask"],
  paths: {
    url: (req) => checkUrl(req.url ?? ""),
    secret(req) {
      if (req.secret === undefined) fail("secret cannot be removed: give a new one to rotate it");
      checkSecret(req.secret);
    },
    // Null is the empty list: no budget.threshold events.
    thresholds_pct: (req) => checkThresholds(req.thresholdsPct?.values ?? []),
    credits_below_usd: (req) => checkCreditsBelow(req.creditsBelowUsd),
    enabled(req) {
      if (req.enabled === undefined) fail("enabled must be true or false");
    },
  },
  notUpdatable: (path) =>
    `update_mask names ${quote(path)}, which is not one of ${Object.keys(WEBHOOK_UPDATE.paths).join(", ")}`,
};

export const WEBHOOK_REQUEST_RULES: RequestRules<typeof WebhookService> = {
  createWebhook(req) {
    checkUrl(req.url);
    if (req.secret !== undefined) checkSecret(req.secret);
    checkThresholds(req.thresholdsPct?.values ?? DEFAULT_THRESHOLDS_PCT);
    checkCreditsBelow(req.creditsBelowUsd);
  },
  getWebhook: noRule,
  listWebhooks(req) {
    page(req);
    if (req.workspaceId !== undefined && !isUuid(req.workspaceId))
      fail(`workspace_id ${quote(req.workspaceId)} is not a workspace id`);
  },
  updateWebhook: (req) => walkUpdateMask(WEBHOOK_UPDATE, req, req.updateMask?.paths ?? []),
  deleteWebhook: noRule,
  listWebhookDeliveries(req) {
    cursorPage(req.limit, WEBHOOK_LIMITS.deliveries);
    if (req.cursor) decodeCursor(req.cursor);
  },
  testWebhook: noRule,
};

/** The service with its rules in front of every method. */
export function checkedWebhookService(
  impl: ServiceImpl<typeof WebhookService>,
): ServiceImpl<typeof WebhookService> {
  return withRequestRules(WebhookService, impl, WEBHOOK_REQUEST_RULES);
}
