import { newId } from "../../domain/ids.js";
import { auditPartitions, insertAuditEvents } from "../request-log/audit-log.js";
import type { SqlDatabase } from "../request-log/database.js";
import type { DayPartitions } from "../request-log/partitions.js";
import type { Page } from "../types.js";
import type {
  AttemptRecord,
  ClaimedDelivery,
  DeliveryCursor,
  DeliveryRecord,
  DeliveryStatus,
  NewDelivery,
  WebhookAudit,
  WebhookChanges,
  WebhookRecord,
  WebhookStore,
} from "./types.js";

/** A second key beside the workspace's hash: no other advisory lock of Railgate uses it. */
const CREATE_LOCK_CLASS = 7_342_003;

interface WebhookRow {
  id: string;
  workspace_id: string;
  url: string;
  secret: string;
  thresholds_pct: number[];
  credits_below_usd: number | null;
  enabled: boolean;
  created_at: Date;
  updated_at: Date | null;
}

interface DeliveryRow {
  id: string;
  webhook_id: string;
  workspace_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  body: string;
}

function webhookOf(r: WebhookRow): WebhookRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    url: r.url,
    secret: r.secret,
    thresholdsPct: [...r.thresholds_pct].map(Number),
    creditsBelowUsd: r.credits_below_usd === null ? null : Number(r.credits_below_usd),
    enabled: r.enabled,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function deliveryOf(r: DeliveryRow): DeliveryRecord {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    workspaceId: r.workspace_id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: Number(r.attempts),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    nextAttemptAt: r.next_attempt_at,
    createdAt: r.created_at,
    deliveredAt: r.delivered_at,
    body: r.body,
  };
}

const DELIVERY_COLUMNS = `id, webhook_id, workspace_id, event_id, event_type, status, attempts,
  last_status_code, last_error, next_attempt_at, created_at, delivered_at, body`;

/** The same SQL on PostgreSQL and on the embedded PGlite (store/request-log/database.ts). */
export class SqlWebhookStore implements WebhookStore {
  private readonly partitions: DayPartitions;

  constructor(private readonly db: SqlDatabase) {
    this.partitions = auditPartitions(db);
  }

  /** Inserts a write's audit event in its transaction (its day's partition made first). */
  private async audited(
    tx: SqlDatabase,
    audit: WebhookAudit | undefined,
    after: WebhookRecord | null,
  ) {
    const event = audit?.(after);
    if (event) await insertAuditEvents(tx, [event]);
  }

  async createWebhook(
    w: WebhookRecord,
    maxPerWorkspace: number,
    audit?: WebhookAudit,
  ): Promise<"ok" | "limit"> {
    if (audit) await this.partitions.ensure([new Date()]);
    return this.db.transaction(async (tx) => {
      // Creates in one workspace queue behind this lock, so two at once cannot both pass the count.
      await tx.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [
        CREATE_LOCK_CLASS,
        w.workspaceId,
      ]);
      const [row] = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM webhooks WHERE workspace_id = $1",
        [w.workspaceId],
      );
      if ((row?.n ?? 0) >= maxPerWorkspace) return "limit";
      await tx.query(
        `INSERT INTO webhooks (id, workspace_id, url, secret, thresholds_pct, credits_below_usd,
           enabled, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [
          w.id,
          w.workspaceId,
          w.url,
          w.secret,
          w.thresholdsPct,
          w.creditsBelowUsd,
          w.enabled,
          w.createdAt,
          w.updatedAt,
        ],
      );
      await this.audited(tx, audit, w);
      return "ok";
    });
  }

  async getWebhook(id: string): Promise<WebhookRecord | undefined> {
    const [row] = await this.db.query<WebhookRow>("SELECT * FROM webhooks WHERE id = $1", [id]);
    return row && webhookOf(row);
  }

  async listWebhooks(
    workspaceId: string | undefined,
    offset: number,
    limit: number,
  ): Promise<Page<WebhookRecord>> {
    const where = "WHERE ($1::text IS NULL OR workspace_id = $1)";
    const ws = workspaceId ?? null;
    const [rows, count] = await Promise.all([
      this.db.query<WebhookRow>(
        `SELECT * FROM webhooks ${where} ORDER BY created_at, id OFFSET $2 LIMIT $3`,
        [ws, offset, limit],
      ),
      this.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM webhooks ${where}`, [ws]),
    ]);
    return { items: rows.map(webhookOf), total: Number(count[0]?.n ?? 0) };
  }

  async updateWebhook(
    id: string,
    changes: WebhookChanges,
    at: Date,
    audit?: WebhookAudit,
  ): Promise<WebhookRecord | undefined> {
    // Only the named columns are written: concurrent updates of other fields never collide.
    const sets: string[] = [];
    const params: unknown[] = [id, at];
    const set = (column: string, value: unknown) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (changes.url !== undefined) set("url", changes.url);
    if (changes.secret !== undefined) set("secret", changes.secret);
    if (changes.thresholdsPct !== undefined) set("thresholds_pct", changes.thresholdsPct);
    if (changes.creditsBelowUsd !== undefined) set("credits_below_usd", changes.creditsBelowUsd);
    if (changes.enabled !== undefined) set("enabled", changes.enabled);
    if (audit) await this.partitions.ensure([new Date()]);
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<WebhookRow>(
        `UPDATE webhooks SET ${[...sets, "updated_at = $2"].join(", ")} WHERE id = $1 RETURNING *`,
        params,
      );
      const updated = row && webhookOf(row);
      if (updated) await this.audited(tx, audit, updated);
      return updated;
    });
  }

  async deleteWebhook(id: string, audit?: WebhookAudit): Promise<boolean> {
    if (audit) await this.partitions.ensure([new Date()]);
    return this.db.transaction(async (tx) => {
      const rows = await tx.query("DELETE FROM webhooks WHERE id = $1 RETURNING id", [id]);
      if (rows.length > 0) await this.audited(tx, audit, null);
      return rows.length > 0;
    });
  }

  async enabledWebhooks(workspaceId: string): Promise<WebhookRecord[]> {
    const rows = await this.db.query<WebhookRow>(
      "SELECT * FROM webhooks WHERE workspace_id = $1 AND enabled ORDER BY created_at, id",
      [workspaceId],
    );
    return rows.map(webhookOf);
  }

  async enqueue(deliveries: NewDelivery[], at: Date): Promise<string[]> {
    const queued: string[] = [];
    for (const d of deliveries) {
      const id = newId();
      const values = [id, d.webhookId, d.workspaceId, d.eventId, d.eventType, d.body, at];
      // With a once key, the once row and the delivery are one statement: the delivery exists
      // exactly when this statement inserted the once row, whichever replica ran it first.
      const rows =
        d.onceKey === null
          ? await this.db.query<{ id: string }>(
              `INSERT INTO webhook_deliveries (id, webhook_id, workspace_id, event_id, event_type,
                 body, status, attempts, next_attempt_at, created_at)
               SELECT $1, w.id, $3, $4, $5, $6, 'pending', 0, $7, $7 FROM webhooks w WHERE w.id = $2
               RETURNING id`,
              values,
            )
          : await this.db.query<{ id: string }>(
              `WITH once AS (
                 INSERT INTO webhook_once (webhook_id, once_key, keep_until)
                 SELECT w.id, $8, $9 FROM webhooks w WHERE w.id = $2 AND w.enabled
                 ON CONFLICT (webhook_id, once_key) DO NOTHING
                 RETURNING webhook_id
               )
               INSERT INTO webhook_deliveries (id, webhook_id, workspace_id, event_id, event_type,
                 body, status, attempts, next_attempt_at, created_at)
               SELECT $1, once.webhook_id, $3, $4, $5, $6, 'pending', 0, $7, $7 FROM once
               RETURNING id`,
              [...values, d.onceKey, d.keepUntil],
            );
      if (rows[0]) queued.push(rows[0].id);
    }
    return queued;
  }

  async getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    const [row] = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1`,
      [id],
    );
    return row && deliveryOf(row);
  }

  async listDeliveries(
    webhookId: string,
    before: DeliveryCursor | undefined,
    limit: number,
  ): Promise<DeliveryRecord[]> {
    const rows = await this.db.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
       WHERE webhook_id = $1 AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [webhookId, before?.createdAt ?? null, before?.id ?? "", limit],
    );
    return rows.map(deliveryOf);
  }

  async claimDue(now: Date, limit: number, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    // SKIP LOCKED: rows another worker is claiming right now are passed over, not waited for;
    // moving next_attempt_at to the lease's end hides the claimed ones from every other worker.
    const rows = await this.db.query<DeliveryRow & { url: string; secret: string }>(
      `UPDATE webhook_deliveries AS d
       SET attempts = d.attempts + 1, next_attempt_at = $2
       FROM webhooks AS w
       WHERE w.id = d.webhook_id AND d.id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'pending' AND next_attempt_at <= $1
         ORDER BY next_attempt_at
         LIMIT $3
         FOR UPDATE SKIP LOCKED
       )
       RETURNING d.id, d.webhook_id, d.workspace_id, d.event_id, d.event_type, d.status,
         d.attempts, d.last_status_code, d.last_error, d.next_attempt_at, d.created_at,
         d.delivered_at, d.body, w.url, w.secret`,
      [now, leaseUntil, limit],
    );
    return rows.map((r) => ({ ...deliveryOf(r), url: r.url, secret: r.secret }));
  }

  async recordAttempt(id: string, a: AttemptRecord): Promise<void> {
    const status: DeliveryStatus = a.delivered
      ? "delivered"
      : a.nextAttemptAt
        ? "pending"
        : "failed";
    await this.db.query(
      `UPDATE webhook_deliveries
       SET status = $2, last_status_code = $3, last_error = $4, next_attempt_at = $5,
         delivered_at = $6
       WHERE id = $1`,
      [
        id,
        status,
        a.statusCode,
        a.error,
        status === "pending" ? a.nextAttemptAt : null,
        a.delivered ? a.at : null,
      ],
    );
  }

  async prune(now: Date, before: Date): Promise<void> {
    await this.db.query(
      "DELETE FROM webhook_deliveries WHERE status <> 'pending' AND created_at < $1",
      [before],
    );
    await this.db.query("DELETE FROM webhook_once WHERE keep_until < $1", [now]);
  }
}
