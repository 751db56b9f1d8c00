import { Code, ConnectError } from "@connectrpc/connect";
import { componentLogger } from "../platform/observability/logger.js";
import { isStoreUnavailable } from "./store-availability.js";

const log = componentLogger("retry-queue");

export interface RetryQueueOptions {
  /** Writes kept at most; one more is dropped (and logged with its details). */
  max: number;
  /** First retry after this long, doubling up to maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * A write still failing after this long is dropped (and logged): idempotency markers in the
   * store outlive it, so no retry can ever apply a write twice.
   */
  maxAgeMs?: number;
}

interface PendingWrite {
  what: string;
  /** Logged if the write has to be dropped, so an operator can apply it by hand. */
  detail: Record<string, unknown>;
  run: () => Promise<unknown>;
  since: number;
}

function unavailable(err: unknown): boolean {
  return isStoreUnavailable(err) || (err instanceof ConnectError && err.code === Code.Unavailable);
}

/**
 * Writes that must not be lost when the store is briefly down (settlements,
 * generation records): each is tried at once and, while the store does not
 * answer, kept in memory and retried in order with exponential backoff, then
 * at once when the store reconnects (`kick`), and last on shutdown (`drain`).
 * Every write must be idempotent: a write that timed out may have been applied.
 * Bounded: beyond `max` pending writes, new ones are dropped and logged.
 */
export class RetryQueue {
  private readonly pending: PendingWrite[] = [];
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly maxAgeMs: number;
  private delayMs: number;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private closed = false;
  /** Writes given up on (queue full, too old, or refused by the store). */
  dropped = 0;

  constructor(private readonly options: RetryQueueOptions) {
    this.baseDelayMs = options.baseDelayMs ?? 200;
    this.maxDelayMs = options.maxDelayMs ?? 5_000;
    this.maxAgeMs = options.maxAgeMs ?? 10 * 60_000;
    this.delayMs = this.baseDelayMs;
  }

  get size(): number {
    return this.pending.length;
  }

  /** Runs the write now, or keeps it for later while the store is unavailable. Never throws. */
  async submit(
    what: string,
    detail: Record<string, unknown>,
    run: () => Promise<unknown>,
  ): Promise<void> {
    // Writes queued before this one go first: the store is most likely still away.
    if (this.pending.length === 0 && !this.closed) {
      try {
        await run();
        return;
      } catch (err) {
        if (!unavailable(err)) {
          this.drop(what, detail, "the store refused it", err);
          return;
        }
      }
    }
    if (this.pending.length >= this.options.max) {
      this.drop(what, detail, `retry queue full (${this.options.max})`);
      return;
    }
    this.pending.push({ what, detail, run, since: Date.now() });
    if (this.pending.length === 1) log.warn("store unavailable: keeping writes for retry");
    this.schedule();
  }

  /** The store is back: retry now rather than at the next backoff step. */
  kick(): void {
    if (this.pending.length === 0) return;
    this.delayMs = this.baseDelayMs;
    clearTimeout(this.timer);
    this.timer = undefined;
    void this.flush();
  }

  /**
   * Shutdown: retries until every write is applied or `withinMs` has passed, then drops
   * (and logs) whatever is left. Later submissions are tried once and never kept.
   */
  async drain(withinMs: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + withinMs;
    while (this.pending.length > 0 && Date.now() < deadline) {
      await this.flush();
      if (this.pending.length > 0) {
        await new Promise((r) => setTimeout(r, Math.min(this.delayMs, deadline - Date.now())));
      }
    }
    for (const w of this.pending.splice(0)) {
      this.drop(w.what, w.detail, "shutting down with the store still unavailable");
    }
  }

  private schedule(): void {
    if (this.timer || this.flushing || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.delayMs);
    // Pending writes do not keep a process alive on their own: shutdown drains them.
    this.timer.unref();
  }

  /** Applies pending writes in order; one flush at a time. */
  private flush(): Promise<void> {
    this.flushing ??= this.applyPending().finally(() => {
      this.flushing = undefined;
      if (this.pending.length > 0) this.schedule();
    });
    return this.flushing;
  }

  /** Stops at the first write that finds the store still away. */
  private async applyPending(): Promise<void> {
    while (this.pending.length > 0) {
      const w = this.pending[0] as PendingWrite;
      if (Date.now() - w.since > this.maxAgeMs) {
        this.pending.shift();
        this.drop(w.what, w.detail, "still unapplied after the retry window");
        continue;
      }
      try {
        await w.run();
        this.pending.shift();
      } catch (err) {
        if (unavailable(err)) {
          this.delayMs = Math.min(this.delayMs * 2, this.maxDelayMs);
          return;
        }
        this.pending.shift();
        this.drop(w.what, w.detail, "the store refused it", err);
      }
    }
    this.delayMs = this.baseDelayMs;
    log.info("store back: every kept write applied");
  }

  private drop(what: string, detail: Record<string, unknown>, why: string, err?: unknown): void {
    this.dropped++;
    log.error(
      { what, detail, why, err: err === undefined ? undefined : String(err) },
      "write lost",
    );
  }
}
