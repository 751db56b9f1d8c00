import { randomBytes } from "node:crypto";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { auditOrigin } from "../../domain/audit.js";
import { isUuid, newId } from "../../domain/ids.js";
import { WEBHOOK_LIMITS } from "../../domain/limits.js";
import { pageParams } from "../../domain/paging.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import type {
  CreateWebhookRequest,
  UpdateWebhookRequest,
  WebhookService,
} from "../../gen/railgate/webhook/v1/webhook_service_pb.js";
import { alertEvent } from "../../governance/alerts/events.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { quote } from "../../platform/quote.js";
import { invalidArgument, notFound } from "../../platform/rpc/errors.js";
import { cursorPageSize } from "../../platform/rpc/request-rules.js";
import { type Clock, systemClock } from "../../platform/time.js";
import { limitError } from "../../store/limits.js";
import { type AuditLog, auditEventOf, changesBetween } from "../../store/request-log/audit-log.js";
import type { Store } from "../../store/types.js";
import type {
  WebhookAudit,
  WebhookChanges,
  WebhookRecord,
  WebhookStore,
} from "../../store/webhooks/types.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { deliveryToProto, webhookToProto } from "./to-proto.js";
import { DEFAULT_THRESHOLDS_PCT, secretHint, storedThresholds, storedUrl } from "./validation.js";

const log = componentLogger("webhooks");

/**
 * What each path of an update writes, in the row's form. The row is no proto
 * message (it holds the secret, the request nests its thresholds), so an
 * update is copied path by path here rather than by copyMaskedFields; the
 * request rules (WEBHOOK_UPDATE) have already refused every path not listed
 * and every value these would store.
 */
const UPDATE_PATHS: Readonly<Record<string, (req: UpdateWebhookRequest) => WebhookChanges>> = {
  url: (req) => ({ url: storedUrl(req.url ?? "") }),
  secret: (req) => (req.secret === undefined ? {} : { secret: req.secret }),
  thresholds_pct: (req) => ({ thresholdsPct: storedThresholds(req.thresholdsPct?.values ?? []) }),
  credits_below_usd: (req) => ({ creditsBelowUsd: req.creditsBelowUsd ?? null }),
  enabled: (req) => (req.enabled === undefined ? {} : { enabled: req.enabled }),
};

function maskedChanges(req: UpdateWebhookRequest, paths: readonly string[]): WebhookChanges {
  const changes: WebhookChanges = {};
  for (const path of paths) {
    const write = UPDATE_PATHS[path];
    if (!write) throw new Error(`${path} is not a path of a webhook update`);
    Object.assign(changes, write(req));
  }
  return changes;
}

/**
 * What the audit log compares before and after a write, in the API's names. The secret only as
 * its hint, and the audit log redacts any secret-named field anyway: a rotation shows that it
 * changed, never to what.
 */
function auditFields(w: WebhookRecord) {
  return {
    url: w.url,
    thresholds_pct: w.thresholdsPct,
    credits_below_usd: w.creditsBelowUsd,
    enabled: w.enabled,
    secret_hint: secretHint(w.secret),
  };
}

/** 32 random bytes: as strong as the HMAC's key can use. */
function generatedSecret(): string {
  return `whsec_${randomBytes(32).toString("hex")}`;
}

/**
 * Budget-alert webhooks and their deliveries (management keys only, like
 * every RPC the caller-auth interceptor does not open wider). Served with its
 * request rules in front (request-rules.ts, checkedWebhookService): a handler
 * runs only on a request they passed, and checks what needs the store.
 */
export class WebhookServiceImpl implements ServiceImpl<typeof WebhookService> {
  constructor(
    private readonly deps: {
      store: Store;
      webhooks: WebhookStore;
      /** Asks the delivery worker to look for due deliveries now (a test event was queued). */
      kick: () => void;
      clock?: Clock;
      /** Management writes (create, update, delete) are recorded here when there is one. */
      audit?: AuditLog;
      /**
       * Queues, for a webhook just created or enabled, the budget thresholds its workspace has
       * crossed in the current windows (governance/alerts/catch-up.ts); none = they wait for
       * the window's next settlement.
       */
      catchUp?: (hook: WebhookRecord) => Promise<number>;
    },
  ) {}

  /** Thresholds already crossed fire for a webhook that starts listening; never fails the write. */
  private async caughtUp(hook: WebhookRecord): Promise<void> {
    if (!hook.enabled || !this.deps.catchUp) return;
    try {
      if ((await this.deps.catchUp(hook)) > 0) this.deps.kick();
    } catch (err) {
      log.warn(
        { err: String(err), webhookId: hook.id },
        "thresholds crossed before the webhook not queued",
      );
    }
  }

  /**
   * Webhooks live in the database itself: the write's audit event is inserted in the write's
   * own transaction (see WebhookAudit), so a change acknowledged has its event.
   */
  private audit(
    ctx: HandlerContext,
    verb: "create" | "update" | "delete",
    before: WebhookRecord | null,
  ): WebhookAudit | undefined {
    if (!this.deps.audit) return undefined;
    const origin = auditOrigin(ctx);
    return (after) => {
      const w = after ?? before;
      if (!w) return undefined;
      return auditEventOf(origin, {
        action: `webhook.${verb}`,
        resource: { type: "webhook", id: w.id, label: w.url },
        workspaceId: w.workspaceId,
        changes: changesBetween(before && auditFields(before), after && auditFields(after)),
      });
    };
  }

  private now(): Date {
    return new Date((this.deps.clock ?? systemClock).now());
  }

  private async webhook(id: string): Promise<WebhookRecord> {
    const found = isUuid(id) ? await this.deps.webhooks.getWebhook(id) : undefined;
    if (!found)
      throw notFound(ErrorReason.WEBHOOK_NOT_FOUND, `webhook ${quote(id.slice(0, 80))} not found`);
    return found;
  }

  private async workspaceId(given: string): Promise<string> {
    if (!given) {
      const def = await this.deps.store.defaultWorkspaceId();
      if (!def)
        throw invalidArgument("workspace_id is required: the default workspace has been deleted");
      return def;
    }
    const ws = isUuid(given) ? await this.deps.store.getWorkspace(given) : undefined;
    if (!ws) throw invalidArgument(`workspace_id ${quote(given)} does not exist`);
    return ws.id;
  }

  async createWebhook(req: CreateWebhookRequest, ctx: HandlerContext) {
    const workspaceId = await this.workspaceId(req.workspaceId);
    const secret = req.secret ?? generatedSecret();
    const record: WebhookRecord = {
      id: newId(),
      workspaceId,
      url: storedUrl(req.url),
      secret,
      thresholdsPct: storedThresholds(req.thresholdsPct?.values ?? DEFAULT_THRESHOLDS_PCT),
      creditsBelowUsd: req.creditsBelowUsd ?? null,
      enabled: req.enabled ?? true,
      createdAt: this.now(),
      updatedAt: null,
    };
    const created = await this.deps.webhooks.createWebhook(
      record,
      WEBHOOK_LIMITS.perWorkspace,
      this.audit(ctx, "create", null),
    );
    if (created === "limit")
      throw limitError(
        `workspace ${quote(workspaceId)} already has ${WEBHOOK_LIMITS.perWorkspace} webhooks (the maximum is ${WEBHOOK_LIMITS.perWorkspace}): delete one first`,
      );
    await this.caughtUp(record);
    return { webhook: webhookToProto(record), secret };
  }

  async getWebhook(req: { id: string }) {
    return { webhook: webhookToProto(await this.webhook(req.id)) };
  }

  async listWebhooks(req: { workspaceId?: string; offset: number; limit: number }) {
    const { offset, limit } = pageParams(req.offset, req.limit);
    const page = await this.deps.webhooks.listWebhooks(req.workspaceId, offset, limit);
    return { webhooks: page.items.map(webhookToProto), totalCount: page.total };
  }

  async updateWebhook(req: UpdateWebhookRequest, ctx: HandlerContext) {
    const changes = maskedChanges(req, req.updateMask?.paths ?? []);
    const before = await this.webhook(req.id);
    const updated = await this.deps.webhooks.updateWebhook(
      req.id,
      changes,
      this.now(),
      this.audit(ctx, "update", before),
    );
    if (!updated)
      throw notFound(ErrorReason.WEBHOOK_NOT_FOUND, `webhook ${quote(req.id)} not found`);
    // Enabled now, or listening for other thresholds: those already crossed are due.
    if (!before.enabled || changes.thresholdsPct !== undefined) await this.caughtUp(updated);
    return { webhook: webhookToProto(updated) };
  }

  async deleteWebhook(req: { id: string }, ctx: HandlerContext) {
    const before = await this.webhook(req.id);
    const deleted = await this.deps.webhooks.deleteWebhook(
      req.id,
      this.audit(ctx, "delete", before),
    );
    return { deleted };
  }

  async listWebhookDeliveries(req: { webhookId: string; cursor: string; limit: number }) {
    const limit = cursorPageSize(req.limit, WEBHOOK_LIMITS.deliveries);
    const before = req.cursor ? decodeCursor(req.cursor) : undefined;
    await this.webhook(req.webhookId);
    // One more than asked tells whether an older page exists.
    const rows = await this.deps.webhooks.listDeliveries(req.webhookId, before, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      deliveries: page.map(deliveryToProto),
      nextCursor: rows.length > limit && last ? encodeCursor(last) : "",
    };
  }

  async testWebhook(req: { id: string }) {
    const hook = await this.webhook(req.id);
    const now = this.now();
    const event = alertEvent("webhook.test", hook.workspaceId, now);
    const [id] = await this.deps.webhooks.enqueue(
      [
        {
          webhookId: hook.id,
          workspaceId: hook.workspaceId,
          eventId: event.id,
          eventType: event.type,
          body: JSON.stringify(event),
          onceKey: null,
          keepUntil: null,
        },
      ],
      now,
    );
    const delivery = id ? await this.deps.webhooks.getDelivery(id) : undefined;
    if (!delivery)
      throw notFound(ErrorReason.WEBHOOK_NOT_FOUND, `webhook ${quote(req.id)} not found`);
    this.deps.kick();
    return { delivery: deliveryToProto(delivery) };
  }
}
