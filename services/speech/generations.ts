import type { UsageGroup } from "../../domain/usage-groups.js";
import type { Generation } from "../../gen/railgate/speech/v1/speech_pb.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { BatchWriter, type BatchWriterStats } from "../../store/request-log/batch-writer.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import {
  type ActivityRow,
  GenerationRecords,
  type ListQuery,
  type LogScope,
  type RecordReplayData,
  type UsageRow,
} from "../../store/request-log/generations.js";
import type { MatchCount } from "../../store/request-log/match-count.js";
import type { Store } from "../../store/types.js";

const log = componentLogger("request-log");
const HOUR_MS = 3_600_000;

export interface GenerationLogOptions {
  /** RAILGATE_REQUEST_LOG_RETENTION_DAYS: older records go, a whole day at a time. */
  retentionDays: number;
  /** RAILGATE_REQUEST_LOG_QUEUE_MAX: records waiting for the database at most. */
  queueMax: number;
  /**
   * An item waits at most this long before its batch is written (default: 50 ms on a
   * PostgreSQL server, EMBEDDED_WRITE_DELAY_MS on the embedded PGlite).
   */
  maxDelayMs?: number;
  /** Where settled records wait until the log holds them (the store's outbox). */
  outbox?: Pick<Store, "outboxDone">;
}

/** Which outbox entry a record came from, to clear once the record is stored. */
export interface OutboxRef {
  scope: string;
  id: string;
}

/**
 * The embedded PGlite runs PostgreSQL on this process's own thread, where a batch's fixed cost
 * (parse, plan, commit: about 1.5 ms) is paid by the requests: at 50 ms a busy gateway wrote
 * batches of ~30 records at ~110 us of CPU each; at 250 ms, ~150 at ~50 us. Nobody else reads
 * this database (it serves one process, and its queued records are read from the queue), so
 * the wait costs only what a crash would lose: a quarter of a second of records.
 */
export const EMBEDDED_WRITE_DELAY_MS = 250;

/**
 * The request log of the speech service: every generation record (served or refused) goes to
 * the database off the hot path, through a bounded batched writer (add() costs the request a
 * push onto an array). Read-your-writes in this process: a record still waiting to be written
 * is found by get(), so GET /generation right after a request answers. Other replicas see it
 * within the writer's delay (50 ms by default on PostgreSQL).
 */
export class GenerationLog {
  private readonly records: GenerationRecords;
  private readonly writer: BatchWriter<Generation>;
  private maintenance?: NodeJS.Timeout;
  private maintaining?: Promise<unknown>;

  constructor(
    db: SqlDatabase,
    private readonly options: GenerationLogOptions,
  ) {
    this.records = new GenerationRecords(db);
    this.writer = new BatchWriter<Generation>({
      name: "generations",
      write: async (batch) => {
        // A process no workspace with replay data has sent a request through looks up nothing.
        if (this.keepsReplayData) await this.replayDataOf(batch);
        await this.records.insert(
          batch,
          this.keepsReplayData ? (g) => this.replay.get(g) : undefined,
        );
        await this.cleared(batch);
      },
      maxDelayMs: options.maxDelayMs ?? (db.kind === "embedded" ? EMBEDDED_WRITE_DELAY_MS : 50),
      queueLimit: options.queueMax,
    });
  }

  /**
   * Partitions ahead and retention: now, then every hour. Every replica runs it; the database's
   * advisory locks make concurrent runs wait for each other, and a second run finds nothing to do.
   */
  startMaintenance(now: () => number = Date.now): void {
    const run = () => {
      this.maintaining = this.records
        .maintain(now(), this.options.retentionDays)
        .then((dropped) => {
          if (dropped.length > 0) {
            log.info(
              { days: dropped.map((d) => new Date(d).toISOString().slice(0, 10)) },
              "request log: partitions past retention dropped",
            );
          }
        })
        .catch((err: unknown) => log.warn({ err: String(err) }, "request log maintenance failed"));
    };
    run();
    this.maintenance = setInterval(run, HOUR_MS);
    this.maintenance.unref();
  }

  /** What records of workspaces that keep replay data keep, by record (see withReplayData). */
  private readonly replay = new WeakMap<Generation, RecordReplayData>();
  private readonly replayPending = new WeakMap<Generation, Promise<void>>();
  private keepsReplayData = false;

  /**
   * Gives a record what it keeps for a what-if replay, worked out off the request's answer:
   * the record is queued at once (a GET right after finds it), and its batch waits for this
   * (the detectors run in a few milliseconds, well within the batch's delay). Data that fails
   * is left out: the record is written without it, and the replay counts it as having none.
   */
  withReplayData(record: Generation, data: Promise<RecordReplayData | undefined>): void {
    this.keepsReplayData = true;
    this.replayPending.set(
      record,
      data.then(
        (d) => {
          if (d) this.replay.set(record, d);
          this.replayPending.delete(record);
        },
        (err: unknown) => {
          this.replayPending.delete(record);
          log.warn({ err: String(err) }, "replay data not kept for a record");
        },
      ),
    );
  }

  private async replayDataOf(batch: readonly Generation[]): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const g of batch) {
      const pending = this.replayPending.get(g);
      if (pending) waits.push(pending);
    }
    if (waits.length > 0) await Promise.all(waits);
  }

  /** Outbox entries of the records queued here, by record. */
  private readonly refs = new WeakMap<Generation, OutboxRef>();
  /**
   * The outbox ids queued here, with when: a recovery pass does not queue them twice, unless
   * the writer held one past a minute (it dropped it: a full queue, a refused batch).
   */
  private readonly queuedOutbox = new Map<string, number>();

  /**
   * Hands a record to the writer: never waits, never throws (see BatchWriter). A record that
   * came through the store's outbox names its entry, which leaves the outbox once it is stored.
   */
  add(record: Generation, outbox?: OutboxRef): void {
    if (outbox) {
      this.refs.set(record, outbox);
      this.queuedOutbox.set(outbox.id, Date.now());
    }
    this.writer.add(record);
  }

  /**
   * Queues a record and waits until it is stored: a refusal recorded before its client is
   * answered. A database that refuses the write leaves the record queued for the writer's
   * retries (logged); this still resolves, so a refusal is never held up by the request log.
   */
  async addStored(record: Generation): Promise<void> {
    this.writer.add(record);
    await this.writer.written().catch((err: unknown) => {
      log.warn({ err: String(err) }, "refusal record queued, not yet stored");
    });
  }

  /** Whether the outbox entry's record is queued here. */
  holds(outboxId: string): boolean {
    const since = this.queuedOutbox.get(outboxId);
    if (since === undefined) return false;
    if (Date.now() - since < 60_000) return true;
    this.queuedOutbox.delete(outboxId);
    return false;
  }

  /**
   * Stored: their outbox entries go. A failure leaves them for a recovery pass, which writes
   * them again (the insert is idempotent).
   */
  private async cleared(batch: readonly Generation[]): Promise<void> {
    const byScope = new Map<string, string[]>();
    for (const g of batch) {
      const ref = this.refs.get(g);
      if (!ref) continue;
      this.queuedOutbox.delete(ref.id);
      const ids = byScope.get(ref.scope);
      if (ids) ids.push(ref.id);
      else byScope.set(ref.scope, [ref.id]);
    }
    if (byScope.size === 0 || !this.options.outbox) return;
    const outbox = this.options.outbox;
    await Promise.all(
      [...byScope].map(([scope, ids]) =>
        outbox.outboxDone(scope, ids).catch((err: unknown) => {
          log.warn({ err: String(err), scope }, "outbox entries not cleared; a recovery pass will");
        }),
      ),
    );
  }

  get stats(): BatchWriterStats {
    return this.writer.stats;
  }

  /** Writes what is queued now (tests, shutdown). */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  async get(id: string, scope: LogScope): Promise<Generation | undefined> {
    const pending = this.writer
      .pending()
      .find(
        (g) =>
          g.id === id &&
          (scope.workspaceId === undefined || g.workspaceId === scope.workspaceId) &&
          (scope.keyHash === undefined || g.keyHash === scope.keyHash),
      );
    return pending ?? this.records.get(id, scope);
  }

  /**
   * Lists and sums read the database, so what this process still holds is written first: an
   * operator sees the request they just made (read-your-writes on this replica; others see it
   * within a batch delay). A database that refuses the write leaves the records queued for
   * the writer's retries, and the read answers what is stored.
   */
  private async ownWritesStored(): Promise<void> {
    await this.writer.written().catch((err: unknown) => {
      log.warn({ err: String(err) }, "request-log records not yet written; reading what is stored");
    });
  }

  async list(q: ListQuery) {
    await this.ownWritesStored();
    return this.records.list(q);
  }

  /** How many records a list's filters match (read after list(), whose writes it sees). */
  count(q: ListQuery): Promise<MatchCount> {
    return this.records.count(q);
  }

  async activity(
    scope: LogScope,
    fromMs: number,
    toMs: number,
    byWorkspace: boolean,
  ): Promise<ActivityRow[]> {
    await this.ownWritesStored();
    return this.records.activity(scope, fromMs, toMs, byWorkspace);
  }

  async usage(
    scope: LogScope,
    granularity: "hour" | "day",
    group: UsageGroup,
    fromMs: number,
    toMs: number,
  ): Promise<UsageRow[]> {
    await this.ownWritesStored();
    return this.records.usage(scope, granularity, group, fromMs, toMs);
  }

  /** Shutdown: writes what is left (bounded by the writer's close time-out). */
  async close(): Promise<void> {
    clearInterval(this.maintenance);
    await this.maintaining;
    await this.writer.close();
  }
}
