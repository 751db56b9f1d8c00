import type { Generation } from "../../../gen/railgate/speech/v1/speech_pb.js";
import type { RecoveryConfig } from "../../../platform/config/config.js";
import { componentLogger } from "../../../platform/observability/logger.js";
import type { SqlDatabase } from "../../../store/request-log/database.js";
import type { Store } from "../../../store/types.js";
import { GenerationLog } from "../generations.js";
import { recordFromOutbox } from "./record-parts.js";
import { recoveryTimings } from "./timings.js";

const log = componentLogger("record-recovery");

/** Reservations settled per scope per pass at most; outbox records moved per pass at most. */
const RECOVER_MAX = 200;
const OUTBOX_MAX = 1000;

export interface RecoveryOptions {
  /** A pass this often. */
  intervalMs: number;
  /**
   * Outbox records younger than this are left to the process that settled them (its request log
   * writer is on its way with them); older ones are orphans of a process that died.
   */
  outboxGraceMs: number;
  now: () => number;
}

/**
 * The live side of recovery, run by every speech process: settles the reservations whose owner
 * stopped beating (status interrupted, charged what its last checkpoint says it served), and
 * moves outbox records that no writer took into the request log. Both steps are idempotent, so
 * every replica runs them without coordination.
 */
export class RecordRecovery {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly generations: GenerationLog,
    private readonly options: RecoveryOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.pass()
        .then(() => undefined)
        .catch((err: unknown) => log.warn({ err: String(err) }, "recovery pass failed"))
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One pass now: answers how many reservations it settled and records it queued. */
  async pass(): Promise<{ settled: number; records: number }> {
    const now = this.options.now();
    const settled = await this.store.recoverReservations(now, RECOVER_MAX);
    if (settled > 0)
      log.warn({ settled }, "reservations of a process that stopped settled as interrupted");
    const orphans = await this.store.outboxRecords(now - this.options.outboxGraceMs, OUTBOX_MAX);
    let records = 0;
    for (const o of orphans) {
      if (this.generations.holds(o.id)) continue;
      let record: Generation;
      try {
        record = recordFromOutbox(o.record);
      } catch (err) {
        log.error({ err: String(err), id: o.id }, "outbox record unreadable: dropped");
        await this.store.outboxDone(o.scope, [o.id]);
        continue;
      }
      this.generations.add(record, { scope: o.scope, id: o.id });
      records++;
    }
    return { settled, records };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}

/** A started recovery loop whose timings come from RAILGATE_RECOVERY_* (timings.ts). */
export function startRecordRecovery(
  store: Store,
  generations: GenerationLog,
  config: RecoveryConfig,
  now: () => number,
): RecordRecovery {
  const timings = recoveryTimings(config);
  const recovery = new RecordRecovery(store, generations, {
    intervalMs: timings.passMs,
    outboxGraceMs: timings.outboxGraceMs,
    now,
  });
  recovery.start();
  return recovery;
}

/**
 * Recovery in a process that serves no speech (the guardrail process of a split deployment), so
 * that reservations of dead speech processes are settled even while none of them runs.
 */
export function startStandaloneRecovery(
  store: Store,
  database: SqlDatabase,
  config: { recovery: RecoveryConfig; logRetentionDays: number; requestLogQueueMax: number },
): { close(): Promise<void> } {
  const generations = new GenerationLog(database, {
    outbox: store,
    retentionDays: config.logRetentionDays,
    queueMax: config.requestLogQueueMax,
  });
  const recovery = startRecordRecovery(store, generations, config.recovery, Date.now);
  return {
    close: async () => {
      await recovery.close();
      await generations.close();
    },
  };
}
