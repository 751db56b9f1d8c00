import { setTimeout as sleep } from "node:timers/promises";
import type { Cluster, Redis } from "ioredis";
import { newId } from "../../domain/ids.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { RedisKeys } from "../redis-keys.js";
import type { SqlDatabase } from "../request-log/database.js";
import { type DurableConfig, hasDurableConfig, readDurableConfig } from "./durable-config.js";
import { type RefillCounts, refillRedis } from "./refill-redis.js";
import { seedFromRedis } from "./seed-from-redis.js";

const log = componentLogger("config-refill");

/** How often a running replica checks that Redis still holds its marker (an emptying without a reconnection). */
const CHECK_EVERY_MS = 5_000;
/** A replica refilling holds the marker this long at most (it dies: another one takes over). */
const REFILL_HOLD_SECONDS = 120;
const REFILLING = "refilling:";

/**
 * Notices a Redis that came back empty and refills it from the database before it serves
 * again. Redis holds a marker (`<prefix>:config-epoch`) that only a refill or a first start
 * writes, so its absence means Redis lost what it held. Checked at start-up (before the
 * process reports ready), on reconnection and every few seconds.
 */
export class RedisConfigRefiller {
  private timer?: NodeJS.Timeout;
  private checking?: Promise<RefillCounts | undefined>;
  private readonly k: RedisKeys;

  constructor(
    private readonly client: Redis | Cluster,
    private readonly prefix: string,
    private readonly db: SqlDatabase,
    private readonly onRefilled: () => Promise<void>,
  ) {
    this.k = new RedisKeys(prefix);
  }

  markerKey(): string {
    return `${this.prefix}:config-epoch`;
  }

  /** Refills Redis when it lost its marker; one check at a time. Resolves with what was written. */
  ensure(): Promise<RefillCounts | undefined> {
    this.checking ??= this.check().finally(() => {
      this.checking = undefined;
    });
    return this.checking;
  }

  private async check(): Promise<RefillCounts | undefined> {
    const marker = await this.client.get(this.markerKey());
    if (marker !== null && !marker.startsWith(REFILLING)) return undefined;
    if (marker === null) {
      const won = await this.client.set(
        this.markerKey(),
        `${REFILLING}${newId()}`,
        "EX",
        REFILL_HOLD_SECONDS,
        "NX",
      );
      if (won === "OK") return this.refill();
    }
    await this.refilledElsewhere();
    return undefined;
  }

  private async refill(): Promise<RefillCounts | undefined> {
    try {
      const config = (await hasDurableConfig(this.db))
        ? await readDurableConfig(this.db, new Date())
        : undefined;
      if (!config || !(await this.lacks(config))) {
        // A first start, or a Redis that ran before this version: what it holds is the copy,
        // and what the database lacks of it is recorded now.
        const seeded = await seedFromRedis(this.client, this.prefix, this.db);
        if (seeded > 0) log.info({ objects: seeded }, "configuration recorded in the database");
        await this.client.set(this.markerKey(), newId());
        return undefined;
      }
      const counts = await refillRedis(this.client, this.prefix, config);
      await this.client.set(this.markerKey(), newId());
      log.warn(
        counts,
        "Redis had lost its configuration: refilled from the database (workspaces, keys, guardrails, assignments, members, policies, credits, key usage)",
      );
      await this.onRefilled();
      return counts;
    } catch (err) {
      // Let the next check (or another replica) try again.
      await this.client.del(this.markerKey()).catch(() => {});
      throw err;
    }
  }

  /**
   * Whether Redis misses what the database holds: its default workspace, or any workspace or
   * key. Not only "is it empty": a write made between the emptying and this check (the operator
   * key registered again, a workspace created) must not hide the loss of everything else.
   */
  private async lacks(config: DurableConfig): Promise<boolean> {
    if (
      config.defaultWorkspace !== undefined &&
      (await this.client.hget(this.k.org(), "default_ws")) === null
    ) {
      return true;
    }
    const [workspaces, keys] = await Promise.all([
      Promise.all(config.workspaces.map((w) => this.client.zscore(this.k.workspaces(), w.id))),
      Promise.all(config.keys.map((key) => this.client.exists(this.k.keyPointer(key.hash)))),
    ]);
    return workspaces.some((score) => score === null) || keys.some((n) => n === 0);
  }

  /** Another replica is refilling: wait until it is done (or gave up) before serving. */
  private async refilledElsewhere(): Promise<void> {
    for (let i = 0; i < REFILL_HOLD_SECONDS * 10; i++) {
      const marker = await this.client.get(this.markerKey());
      if (marker === null) return void (await this.ensure());
      if (!marker.startsWith(REFILLING)) return;
      await sleep(100);
    }
  }

  /** Checks now and then every few seconds, until close(). */
  watch(): void {
    const quietly = () => {
      this.ensure().catch((err: unknown) =>
        log.warn({ err: String(err) }, "configuration refill check failed; retried"),
      );
    };
    this.timer = setInterval(quietly, CHECK_EVERY_MS);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }
}

/**
 * A loud warning when Redis keeps nothing on disk: a restart then empties it, and the
 * configuration comes back only from the database (counters as far as the records allow).
 * CONFIG may be disabled (managed Redis): then nothing is said.
 */
export async function warnWithoutPersistence(client: Redis | Cluster): Promise<void> {
  try {
    const aof = (await client.config("GET", "appendonly")) as string[];
    const save = (await client.config("GET", "save")) as string[];
    if (aof[1] === "no" && (save[1] ?? "") === "") {
      log.error(
        { appendonly: aof[1], save: save[1] ?? "" },
        'Redis runs WITHOUT persistence (appendonly no, save ""): a Redis restart loses every counter; configuration is refilled from the database, spend counters only as far as the request log allows (docs/failures.md)',
      );
    }
  } catch {
    // CONFIG renamed or disabled: the operator chose; nothing to check.
  }
}
