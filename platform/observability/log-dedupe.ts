import type { Logger } from "pino";

/** How long identical lines are folded into one count (fixed: docs/operations.md "Request ids and access logs"). */
export const LOG_DEDUPE_WINDOW_MS = 10_000;

/**
 * Distinct lines one window tracks. Keys are built from our own messages and codes, but a
 * message may quote a provider's words: past this many, further distinct lines are counted
 * together, so no caller can grow the map (or the log) without bound.
 */
const MAX_KEYS = 200;

type Level = "error" | "warn" | "info";

interface Entry {
  log: Logger;
  level: Level;
  msg: string;
  fields: Record<string, unknown>;
  repeated: number;
}

/** Every dedupe made, so a shutdown can write out the counts still pending (flushLogDedupe). */
const all = new Set<LogDedupe>();

/**
 * Folds identical log lines: the first of a kind within a window is written at once; those
 * that follow within the window are only counted, and one line "<msg> (repeated N times)"
 * with `repeated: N` is written when the window ends. A flood of the same failure (a provider
 * down under load, a bug hit by every request) costs two lines per window, not one per
 * request, while the first occurrence still shows at once. The timer is unref'd: it never
 * keeps a process alive.
 */
export class LogDedupe {
  private readonly entries = new Map<string, Entry>();
  /** Lines past MAX_KEYS distinct kinds in this window: counted, summarised at its end. */
  private overflow: { log: Logger; count: number } | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly windowMs = LOG_DEDUPE_WINDOW_MS) {
    all.add(this);
  }

  /**
   * Writes `msg` with `fields` at `level`, unless a line of the same `key` was written in
   * this window. `key` names what makes two lines "the same" (message and code, typically),
   * never anything per request (ids, times): those fields come from the window's last line.
   */
  write(
    log: Logger,
    level: Level,
    key: string,
    fields: Record<string, unknown>,
    msg: string,
  ): void {
    const full = `${level}\u0000${msg}\u0000${key}`;
    const seen = this.entries.get(full);
    if (seen) {
      seen.repeated++;
      seen.fields = fields;
      return;
    }
    if (this.entries.size >= MAX_KEYS) {
      this.overflow ??= { log, count: 0 };
      this.overflow.count++;
      return;
    }
    this.entries.set(full, { log, level, msg, fields, repeated: 0 });
    log[level](fields, msg);
    this.timer ??= setTimeout(() => this.flush(), this.windowMs);
    this.timer.unref();
  }

  /** Ends the window now: writes the count of every line repeated in it. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const e of this.entries.values()) {
      if (e.repeated > 0) {
        e.log[e.level](
          { ...e.fields, repeated: e.repeated, windowMs: this.windowMs },
          `${e.msg} (repeated ${e.repeated} times)`,
        );
      }
    }
    this.entries.clear();
    if (this.overflow) {
      this.overflow.log.warn(
        { repeated: this.overflow.count, windowMs: this.windowMs },
        `${this.overflow.count} more log lines of other kinds were dropped in this window`,
      );
      this.overflow = undefined;
    }
  }
}

/** Writes out every pending count: at shutdown, so the last window's counts are not lost. */
export function flushLogDedupe(): void {
  for (const d of all) d.flush();
}
