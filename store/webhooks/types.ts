import type { AuditEvent } from "../request-log/audit-log.js";
import type { Page } from "../types.js";

/** A webhook row (the secret stays in the database; the API shows its last 4 characters). */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  secret: string;
  thresholdsPct: number[];
  creditsBelowUsd: number | null;
  enabled: boolean;
  createdAt: Date;
  updatedAt: Date | null;
}

/** The writable fields of a webhook; absent = unchanged. */
export type WebhookChanges = Partial<
  Pick<WebhookRecord, "url" | "secret" | "thresholdsPct" | "creditsBelowUsd" | "enabled">
>;

export type DeliveryStatus = "pending" | "delivered" | "failed";

export interface DeliveryRecord {
  id: string;
  webhookId: string;
  workspaceId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  /** A kind (timeout, connection_refused, http_status ...), never a network message. */
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
  /** The event as sent to the receiver (JSON text; it holds no secret). */
  body: string;
}

/** A delivery a worker claimed, with what it needs to send it. */
export interface ClaimedDelivery extends DeliveryRecord {
  url: string;
  secret: string;
}

/** An event to queue for one webhook; with a once key it is queued at most once, ever. */
export interface NewDelivery {
  webhookId: string;
  workspaceId: string;
  eventId: string;
  eventType: string;
  body: string;
  /** null: no once rule (test events). */
  onceKey: string | null;
  /** When the once key may be forgotten (its window's end); null = while the webhook exists. */
  keepUntil: Date | null;
}

/** The outcome of one attempt, to record. */
export interface AttemptRecord {
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  /** The retry's time; null with delivered false = failed for good. */
  nextAttemptAt: Date | null;
  at: Date;
}

/** Where deliveries list from: older than this one (newest first). */
export interface DeliveryCursor {
  createdAt: Date;
  id: string;
}

/**
 * Webhooks and their deliveries, in the request-log database (PostgreSQL, or
 * embedded PGlite). Rows, not counters: nothing here is on the speech hot path.
 */
/**
 * The audit event of a webhook write, made from the webhook as written (null: deleted); the
 * store inserts it in the write's own transaction, so the change and its event commit together.
 */
export type WebhookAudit = (after: WebhookRecord | null) => AuditEvent | undefined;

export interface WebhookStore {
  /** "limit" when the workspace already holds `maxPerWorkspace` webhooks (checked atomically). */
  createWebhook(
    w: WebhookRecord,
    maxPerWorkspace: number,
    audit?: WebhookAudit,
  ): Promise<"ok" | "limit">;
  getWebhook(id: string): Promise<WebhookRecord | undefined>;
  listWebhooks(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<WebhookRecord>>;
  updateWebhook(
    id: string,
    changes: WebhookChanges,
    at: Date,
    audit?: WebhookAudit,
  ): Promise<WebhookRecord | undefined>;
  /** Deletes the webhook, its deliveries and its once keys. */
  deleteWebhook(id: string, audit?: WebhookAudit): Promise<boolean>;
  /** The enabled webhooks of a workspace (what the detector alerts). */
  enabledWebhooks(workspaceId: string): Promise<WebhookRecord[]>;
  /**
   * Queues deliveries (alerts, with a once key, only to an enabled webhook: one disabled since
   * the detector read it gets none); one whose once key the webhook already has is skipped,
   * atomically in the database (a unique constraint), so concurrent replicas
   * queue it once between them. Returns the ids of the deliveries queued.
   */
  enqueue(deliveries: NewDelivery[], at: Date): Promise<string[]>;
  getDelivery(id: string): Promise<DeliveryRecord | undefined>;
  /** Newest first, older than `before` when given. */
  listDeliveries(
    webhookId: string,
    before: DeliveryCursor | undefined,
    limit: number,
  ): Promise<DeliveryRecord[]>;
  /**
   * Claims up to `limit` due pending deliveries for this worker: each counts
   * an attempt and is hidden from other workers until `leaseUntil` (if this
   * worker dies, another retries it then). On PostgreSQL, FOR UPDATE SKIP
   * LOCKED lets workers on any number of replicas claim side by side.
   */
  claimDue(now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]>;
  recordAttempt(id: string, attempt: AttemptRecord): Promise<void>;
  /** Deletes finished deliveries created before `before` and once keys kept until before `now`. */
  prune(now: Date, before: Date): Promise<void>;
}
