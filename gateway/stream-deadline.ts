/** What `StreamDeadline.within` answers when the wait ran out. */
export const TIMED_OUT: unique symbol = Symbol("timed out");

/**
 * Bounds each wait on a stream (its first message, then each next one) without a timer per
 * message: one timer, re-armed only when it fires, checks whether the current wait has lasted
 * its limit. An audio stream of thousands of messages costs a timer every `limit` ms at most.
 * Time the caller spends elsewhere (writing to a slow client) is not counted: only waits are.
 */
export class StreamDeadline {
  private readonly expired: Promise<typeof TIMED_OUT>;
  private expire!: () => void;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires. */
  private timerDue = 0;
  /** When the current wait began; undefined between waits. */
  private since: number | undefined;
  private limitMs = 0;
  private done = false;

  /** `onExpire` runs once, when a wait runs out (e.g. to cancel the call behind the stream). */
  constructor(onExpire: () => void) {
    this.expired = new Promise((resolve) => {
      this.expire = () => {
        this.done = true;
        onExpire();
        resolve(TIMED_OUT);
      };
    });
  }

  /** `pending`, or TIMED_OUT when it has not settled within `limitMs` from now. */
  async within<T>(pending: Promise<T>, limitMs: number): Promise<T | typeof TIMED_OUT> {
    if (this.done) return TIMED_OUT;
    this.limitMs = limitMs;
    this.since = performance.now();
    // A timer set for a longer limit (the first message's) would fire too late for this wait.
    if (this.timer === undefined || this.timerDue > this.since + limitMs) {
      clearTimeout(this.timer);
      this.timer = this.arm(limitMs);
    }
    try {
      return await Promise.race([pending, this.expired]);
    } finally {
      this.since = undefined;
    }
  }

  /** Stops the timer (the stream ended, or the request failed). */
  close(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): NodeJS.Timeout {
    this.timerDue = performance.now() + ms;
    const timer = setTimeout(() => this.check(), ms);
    timer.unref();
    return timer;
  }

  private check(): void {
    this.timer = undefined;
    // Between waits: the next wait arms the timer again.
    if (this.since === undefined || this.done) return;
    const left = this.limitMs - (performance.now() - this.since);
    if (left > 0) this.timer = this.arm(left);
    else this.expire();
  }
}
