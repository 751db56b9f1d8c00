import { CONFIG_DEFAULTS } from "../../platform/config/config.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { logRecords, trackLogQueue } from "../../platform/observability/metrics.js";

const log = componentLogger("batch-writer");

export interface BatchWriterOptions<T> {
  /** Named in logs and stats ("generations", "audit-log"...). */
  name: string;
  /**
   * Writes one batch. Must be idempotent (e.g. INSERT ... ON CONFLICT DO NOTHING by id): a
   * write that failed may still have been applied, and it is retried.
   */
  write: (batch: T[]) => Promise<void>;
  /** Items per write at most (default 500). */
  maxBatch?: number;
  /** An item waits at most this long before its batch is written (default 50 ms). */
  maxDelayMs?: number;
  /** Items waiting at most (default RAILGATE_REQUEST_LOG_QUEUE_MAX's); beyond it add() drops the item and counts it. */
  queueLimit?: number;
  /** First retry after this long, doubling up to 5 s (default 100 ms). */
  retryBaseMs?: number;
  /**
   * A batch refused this many times in a row for a reason that is not "the database is away"
   * (bad data, a constraint) is dropped and logged, so one bad item cannot block the log
   * forever (default 5). Connection failures are retried for as long as the queue has room.
   */
  maxAttempts?: number;
  /** close() writes what is left for at most this long, then drops and logs it (default 10 s). */
  closeTimeoutMs?: number;
}

export interface BatchWriterStats {
  written: number;
  dropped: number;
  /** Failed write attempts (each retried or, at the last attempt, dropped). */
  failures: number;
  queued: number;
}

/**
 * SQLSTATE classes that mean "try again later": connection (08), resources (53), operator
 * intervention such as a restart (57), system (58), and lock/serialization trouble (40).
 * An error without a SQLSTATE (socket closed, time-out) is treated the same.
 */
function transient(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || !/^[0-9A-Z]{5}$/.test(code)) return true;
  return ["08", "40", "53", "57", "58"].includes(code.slice(0, 2));
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref();
  });

/**
 * Takes records off the hot path: add() only pushes to an in-memory queue (never waits, never
 * throws); one loop writes them in batches of up to maxBatch, within maxDelayMs of the first
 * waiting item, one write at a time, retrying failures with exponential backoff. Bounded:
 * while the database is away the queue grows up to queueLimit, then new items are dropped
 * (counted, logged once per burst) instead of growing memory without end.
 */
export class BatchWriter<T> {
  private readonly queue: T[] = [];
  /** The batch being written: still "pending" for readers (read-your-writes). */
  private inFlight: readonly T[] = [];
  private readonly maxBatch: number;
  private readonly maxDelayMs: number;
  private readonly queueLimit: number;
  private readonly retryBaseMs: number;
  private readonly maxAttempts: number;
  private readonly closeTimeoutMs: number;
  private timer?: NodeJS.Timeout;
  /** Failed attempts of the batch at the front, and the wait before its next attempt. */
  private attempts = 0;
  private retryDelay: number;
  private running?: Promise<void>;
  private closed = false;
  private droppedSinceLog = 0;
  /** Rejection of the last write attempt (flush() reports it); cleared by a success. */
  private lastError: unknown;
  private readonly counts = { written: 0, dropped: 0, failures: 0 };
  /**
   * Items ever queued, and how many of them have left the queue for good (written, or dropped
   * as refused): the queue is first in, first out, so the items queued before a moment are
   * settled once `settled` reaches the count `accepted` had then.
   */
  private accepted = 0;
  private settled = 0;
  /** Waiters for the end of the current write attempt (see written()). */
  private attemptWaiters: (() => void)[] = [];
  private readonly untrack: () => void;

  constructor(private readonly options: BatchWriterOptions<T>) {
    this.maxBatch = options.maxBatch ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 50;
    this.queueLimit = options.queueLimit ?? CONFIG_DEFAULTS.requestLogQueueMax;
    this.retryBaseMs = options.retryBaseMs ?? 100;
    this.maxAttempts = options.maxAttempts ?? 5;
    this.closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
    this.retryDelay = this.retryBaseMs;
    this.untrack = trackLogQueue(options.name, () => this.queue.length + this.inFlight.length);
  }

  get stats(): BatchWriterStats {
    return { ...this.counts, queued: this.queue.length + this.inFlight.length };
  }

  /** Items not yet known to be written (queued and in flight), oldest first. */
  pending(): readonly T[] {
    return this.inFlight.length === 0 ? this.queue : [...this.inFlight, ...this.queue];
  }

  /** Queues one item. Never blocks, never throws: beyond the bound (or after close) it drops it. */
  add(item: T): void {
    if (this.closed || this.queue.length + this.inFlight.length >= this.queueLimit) {
      this.drop(1, this.closed ? "writer closed" : `queue full (${this.queueLimit})`);
      return;
    }
    this.queue.push(item);
    this.accepted++;
    if (this.running || this.timer) return;
    if (this.queue.length >= this.maxBatch) this.start();
    else this.schedule(this.maxDelayMs);
  }

  /**
   * Writes everything queued now. Resolves when it is written; rejects with the database's
   * error when a write fails (the items stay queued and are retried in the background).
   */
  async flush(): Promise<void> {
    while (this.queue.length > 0 || this.running) {
      this.start();
      await this.running;
      if (this.lastError !== undefined) throw this.lastError;
    }
  }

  /**
   * Writes what is queued at the call, not what arrives while it waits (flush() waits for an
   * empty queue, which steady traffic may not leave): a reader lists its own process's records
   * a moment after they were made. Rejects with the database's error when a write fails (the
   * items stay queued and are retried in the background).
   */
  async written(): Promise<void> {
    const target = this.accepted;
    while (this.settled < target) {
      const attempt = new Promise<void>((resolve) => this.attemptWaiters.push(resolve));
      this.start();
      await attempt;
      if (this.settled < target && this.lastError !== undefined) throw this.lastError;
    }
  }

  /** Stops taking items and writes what is left (for at most closeTimeoutMs), then drops the rest. */
  async close(): Promise<void> {
    this.closed = true;
    const deadline = Date.now() + this.closeTimeoutMs;
    let delay = this.retryBaseMs;
    for (;;) {
      try {
        await this.flush();
        break;
      } catch {
        if (Date.now() + delay >= deadline) break;
        await sleep(delay);
        delay = Math.min(delay * 2, 5_000);
      }
    }
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (this.queue.length > 0) {
      const left = this.queue.splice(0).length;
      this.settled += left;
      this.drop(left, "closing: database away");
    }
    this.attemptEnded();
    this.untrack();
  }

  private schedule(delayMs: number): void {
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.start();
    }, delayMs);
    // Waiting items do not keep a process alive on their own: close() drains them.
    this.timer.unref();
  }

  private start(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.running ??= this.loop().finally(() => {
      this.running = undefined;
      if (this.queue.length === 0 || this.closed) return;
      // Left by a failure: retry after the backoff; added during the last write: soon.
      if (this.lastError !== undefined) {
        this.schedule(this.retryDelay);
        this.retryDelay = Math.min(this.retryDelay * 2, 5_000);
      } else {
        this.schedule(this.maxDelayMs);
      }
    });
  }

  /** Writes batches until the queue is empty or a write fails (start() schedules the retry). */
  private async loop(): Promise<void> {
    while (this.queue.length > 0) {
      this.inFlight = this.queue.splice(0, this.maxBatch);
      try {
        await this.options.write(this.inFlight as T[]);
        this.counts.written += this.inFlight.length;
        this.settled += this.inFlight.length;
        logRecords.labels(this.options.name, "written").inc(this.inFlight.length);
        this.inFlight = [];
        this.lastError = undefined;
        this.attempts = 0;
        this.retryDelay = this.retryBaseMs;
        this.attemptEnded();
      } catch (err) {
        const batch = this.inFlight;
        this.inFlight = [];
        this.counts.failures++;
        this.attempts++;
        if (!transient(err) && this.attempts >= this.maxAttempts) {
          log.error(
            { writer: this.options.name, err: String(err), items: batch.length },
            "batch refused by the database: dropped",
          );
          this.counts.dropped += batch.length;
          this.settled += batch.length;
          logRecords.labels(this.options.name, "dropped").inc(batch.length);
          this.attempts = 0;
          // The next batch starts afresh; `lastError` stays for flush() to report.
          this.lastError = err;
          this.attemptEnded();
          continue;
        }
        // Back to the front, in order, for the retry.
        this.queue.unshift(...batch);
        this.lastError = err;
        if (this.attempts === 1) {
          log.warn({ writer: this.options.name, err: String(err) }, "log write failed: retrying");
        }
        this.attemptEnded();
        return;
      }
    }
  }

  /** Wakes written()'s waiters: one write attempt is over, whatever its outcome. */
  private attemptEnded(): void {
    const waiters = this.attemptWaiters;
    this.attemptWaiters = [];
    for (const wake of waiters) wake();
  }

  private drop(n: number, why: string): void {
    this.counts.dropped += n;
    logRecords.labels(this.options.name, "dropped").inc(n);
    // One line per burst, not per item: a full queue under load would flood the log.
    if (this.droppedSinceLog === 0) {
      log.error({ writer: this.options.name, why }, "log records dropped");
      setTimeout(() => {
        if (this.droppedSinceLog > 1) {
          log.error(
            { writer: this.options.name, dropped: this.droppedSinceLog },
            "log records dropped (burst)",
          );
        }
        this.droppedSinceLog = 0;
      }, 10_000).unref();
    }
    this.droppedSinceLog += n;
  }
}
