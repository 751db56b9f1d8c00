import { newId } from "../../domain/ids.js";
import { webhookAttempts } from "../../domain/metrics.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { ClaimedDelivery, WebhookStore } from "../../store/webhooks/types.js";
import { type BackoffSettings, nextAttemptAt } from "./backoff.js";
import { DeliveryClient } from "./delivery-client.js";

const log = componentLogger("webhooks");

export interface DeliveryWorkerSettings {
  /** One attempt's deadline: connect, answer head and body (RAILGATE_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** How often due deliveries are looked for (RAILGATE_WEBHOOK_WORKER_INTERVAL_MS). */
  intervalMs: number;
  /** Attempts in flight at most, per worker (RAILGATE_WEBHOOK_CONCURRENCY). */
  concurrency: number;
  backoff: BackoffSettings;
}

/** Finished deliveries are listed for this long, then deleted. */
export const DELIVERY_RETENTION_MS = 30 * 24 * 3600 * 1000;
const PRUNE_EVERY_MS = 3600 * 1000;
/** A claim outlives its attempt by this much before another worker may take the delivery over. */
const LEASE_MARGIN_MS = 5_000;

/**
 * Sends queued deliveries. Every process that runs one claims due deliveries
 * from the database (FOR UPDATE SKIP LOCKED on PostgreSQL), so any number of
 * replicas share the work and none sends a delivery another holds; a worker
 * that dies mid-attempt loses its claim when the lease ends, and the delivery
 * is tried again. At most `concurrency` attempts run at once per worker.
 */
export class DeliveryWorker {
  private readonly client: DeliveryClient;
  private timer?: NodeJS.Timeout;
  private readonly active = new Set<Promise<void>>();
  private ticking?: Promise<void>;
  private again = false;
  private closed = false;
  private lastPrune = 0;

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly settings: DeliveryWorkerSettings,
    private readonly clock: Clock = systemClock,
  ) {
    this.client = new DeliveryClient(settings.timeoutMs);
  }

  start(): void {
    this.timer = setInterval(() => this.kick(), this.settings.intervalMs);
    this.timer.unref();
    this.kick();
  }

  /** Looks for due deliveries now (coalesced with a look already running). */
  kick(): void {
    if (this.closed) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((err) => log.warn({ err: String(err) }, "webhook worker could not claim deliveries"))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  private async tick(): Promise<void> {
    await this.prune();
    for (;;) {
      const room = this.settings.concurrency - this.active.size;
      if (room <= 0 || this.closed) return;
      const now = this.now();
      const leaseUntil = new Date(now.getTime() + this.settings.timeoutMs + LEASE_MARGIN_MS);
      const claimed = await this.webhooks.claimDue(now, room, leaseUntil);
      for (const d of claimed) {
        const attempt: Promise<void> = this.attempt(d)
          .catch((err) =>
            log.warn({ err: String(err), deliveryId: d.id }, "webhook attempt not recorded"),
          )
          .finally(() => {
            this.active.delete(attempt);
            // A slot is free: more may be due.
            this.kick();
          });
        this.active.add(attempt);
      }
      if (claimed.length < room) return;
    }
  }

  private async attempt(d: ClaimedDelivery): Promise<void> {
    const requestId = newId();
    const started = this.now();
    const result = await this.client.send({
      url: d.url,
      secret: d.secret,
      body: d.body,
      eventId: d.eventId,
      eventType: d.eventType,
      deliveryId: d.id,
      requestId,
      timestamp: Math.floor(started.getTime() / 1000),
    });
    const at = this.now();
    const next = result.ok
      ? null
      : nextAttemptAt(d.createdAt, d.attempts, at, this.settings.backoff);
    const fields = {
      requestId,
      deliveryId: d.id,
      webhookId: d.webhookId,
      eventType: d.eventType,
      attempt: d.attempts,
      statusCode: result.statusCode ?? undefined,
      durationMs: at.getTime() - started.getTime(),
    };
    webhookAttempts.labels(result.ok ? "delivered" : next ? "retry" : "failed").inc();
    if (result.ok) log.info(fields, "webhook delivered");
    else if (next)
      log.info({ ...fields, error: result.error, retryAt: next }, "webhook attempt failed");
    else log.warn({ ...fields, error: result.error }, "webhook delivery failed for good");
    await this.webhooks.recordAttempt(d.id, {
      delivered: result.ok,
      statusCode: result.statusCode,
      error: result.ok ? null : result.error,
      nextAttemptAt: next,
      at,
    });
  }

  private async prune(): Promise<void> {
    const now = this.now();
    if (now.getTime() - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now.getTime();
    await this.webhooks.prune(now, new Date(now.getTime() - DELIVERY_RETENTION_MS));
  }

  /** Stops claiming, waits for attempts in flight (each bounded by its time-out). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.ticking;
    await Promise.allSettled([...this.active]);
    await this.client.close();
  }
}
