import type { Cluster, Redis } from "ioredis";
import { componentLogger } from "../../platform/observability/logger.js";
import type { SqlDatabase } from "../request-log/database.js";
import { applyConfigEntries } from "./apply-sql.js";
import { type ConfigEntry, parseOutboxEntry } from "./entry.js";
import { OUTBOX_SUFFIX } from "./outbox-lua.js";

const log = componentLogger("config-outbox");

/** Entries moved to the database per transaction at most. */
const BATCH = 100;
/**
 * A scope leaves the set of pending scopes only when its outbox is empty and no writer named it
 * for this long: a writer adds its scope just before its script runs, so a drainer that found
 * the outbox empty a moment before that script never forgets the entry it adds.
 */
const FORGET_AFTER_MS = 60_000;

/** Removes a scope from the pending set unless a writer named it since `cutoff` (one key). */
const FORGET_SCOPE = `
local score = redis.call("ZSCORE", KEYS[1], ARGV[1])
if score and tonumber(score) < tonumber(ARGV[2]) then redis.call("ZREM", KEYS[1], ARGV[1]) end
return 0
`;

export interface DrainerOptions {
  /** How often every pending outbox is drained (default 200 ms). */
  intervalMs?: number;
}

/**
 * Moves the configuration outboxes (one Redis stream per scope) into the database: the audit
 * events, the credit ledger and the objects' snapshots, one transaction per batch, then
 * removes what was written. Any live replica drains any scope; two draining the same entries
 * at once write them once (see applyConfigEntries), so no lock is needed.
 */
export class ConfigOutboxDrainer {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private readonly inFlight = new Map<string, Promise<number>>();

  constructor(
    private readonly client: Redis | Cluster,
    private readonly prefix: string,
    private readonly db: SqlDatabase,
    private readonly options: DrainerOptions = {},
  ) {}

  /** The global sorted set of scopes whose outbox may hold entries (score: last write's ms). */
  pendingKey(): string {
    return `${this.prefix}:${OUTBOX_SUFFIX}-scopes`;
  }

  outboxKey(scope: string): string {
    return `${this.prefix}:{w:${scope}}:${OUTBOX_SUFFIX}`;
  }

  /** Called before a write's script runs: its scope is then on the drainers' list. */
  async announce(scope: string): Promise<void> {
    await this.client.zadd(this.pendingKey(), Date.now(), scope);
  }

  /** Drains one scope's outbox; resolves with the number of entries written. */
  drainScope(scope: string): Promise<number> {
    // One drain per scope at a time in this process: a second caller shares the running one,
    // then runs again (its own entry may have arrived after the first read).
    const before = this.inFlight.get(scope) ?? Promise.resolve(0);
    const next = before
      .catch(() => 0)
      .then(() => this.drainOnce(scope))
      .finally(() => {
        if (this.inFlight.get(scope) === next) this.inFlight.delete(scope);
      });
    this.inFlight.set(scope, next);
    return next;
  }

  private async drainOnce(scope: string): Promise<number> {
    const key = this.outboxKey(scope);
    let written = 0;
    for (;;) {
      const raw = (await this.client.xrangeBuffer(key, "-", "+", "COUNT", BATCH)) as [
        Buffer,
        Buffer[],
      ][];
      if (raw.length === 0) break;
      const entries: ConfigEntry[] = raw.map(([id, fields]) =>
        parseOutboxEntry(scope, id.toString(), fields),
      );
      await applyConfigEntries(this.db, entries);
      await this.client.xdel(key, ...raw.map(([id]) => id.toString()));
      written += raw.length;
      if (raw.length < BATCH) break;
    }
    if (written === 0) {
      await this.client.eval(
        FORGET_SCOPE,
        1,
        this.pendingKey(),
        scope,
        Date.now() - FORGET_AFTER_MS,
      );
    }
    return written;
  }

  /**
   * Drains the scope a write just used, giving up (leaving the entry for any replica) after
   * `withinMs`: the answer waits for the database only while it answers quickly.
   */
  async drainSoon(scope: string, withinMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), withinMs);
      timer.unref();
    });
    try {
      return await Promise.race([
        this.drainScope(scope).then(
          () => true,
          (err: unknown) => {
            log.warn({ scope, err: String(err) }, "configuration outbox not drained; retried");
            return false;
          },
        ),
        late,
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Drains every pending scope once. */
  async drainAll(): Promise<number> {
    const scopes = await this.client.zrange(this.pendingKey(), 0, -1);
    let n = 0;
    for (const scope of scopes) n += await this.drainScope(scope);
    return n;
  }

  /** Drains every pending scope now and then on the interval, until close(). */
  start(): void {
    const tick = () => {
      if (this.running) return;
      this.running = this.drainAll()
        .then(() => undefined)
        .catch((err: unknown) =>
          log.warn({ err: String(err) }, "configuration outbox drain failed; retried"),
        )
        .finally(() => {
          this.running = undefined;
        });
    };
    tick();
    this.timer = setInterval(tick, this.options.intervalMs ?? 200);
    this.timer.unref();
  }

  /** Stops the interval and lets a drain under way finish; what is left stays in Redis. */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
    await Promise.allSettled([...this.inFlight.values()]);
  }
}
