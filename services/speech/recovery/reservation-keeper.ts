import { componentLogger } from "../../../platform/observability/logger.js";
import type { Admission, Settlement } from "../../../store/admission.js";
import type { ReservationCheckpoint } from "../../../store/reservations.js";
import type { Store } from "../../../store/types.js";

const log = componentLogger("reservations");

/** One reservation this process holds while its request runs. */
export interface HeldReservation {
  readonly admission: Admission;
  /** What settling it now would charge and record (set once audio flows). */
  progress?: () => { actual: Settlement; record: Uint8Array };
  /** Served more since the last checkpoint: the next one stores its progress. */
  dirty: boolean;
}

export interface KeeperOptions {
  /** How long a lease runs from each heartbeat. */
  leaseMs: number;
  /** Heartbeats (and checkpoints of what was served) this often. */
  checkpointMs: number;
  now: () => number;
}

/**
 * The owner's side of recovery: every `checkpointMs` one call per scope moves the leases of all
 * the reservations this process holds and stores what each served since the last beat. The hot
 * path only flags a request as having progressed; the settlement and record it would leave are
 * worked out here, at most once a beat per request. A process that dies stops beating, and a
 * live one settles its reservations once their leases end (record-recovery.ts).
 */
export class ReservationKeeper {
  private readonly held = new Map<string, HeldReservation>();
  private timer?: NodeJS.Timeout;
  private beating?: Promise<void>;

  constructor(
    private readonly store: Store,
    private readonly options: KeeperOptions,
  ) {}

  /** When a lease made now ends. */
  leaseUntil(): number {
    return this.options.now() + this.options.leaseMs;
  }

  hold(admission: Admission): HeldReservation {
    const held: HeldReservation = { admission, dirty: false };
    if (admission.id) this.held.set(admission.id, held);
    return held;
  }

  release(admission: Admission): void {
    if (admission.id) this.held.delete(admission.id);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, this.options.checkpointMs);
    this.timer.unref();
  }

  /** One heartbeat now (tests; the timer's beats otherwise). */
  async beat(): Promise<void> {
    const byScope = new Map<string, ReservationCheckpoint[]>();
    const leaseUntilMs = this.leaseUntil();
    for (const [id, held] of this.held) {
      let progress: ReservationCheckpoint["progress"];
      if (held.dirty && held.progress) {
        held.dirty = false;
        progress = held.progress();
      }
      const scope = held.admission.scope;
      let list = byScope.get(scope);
      if (!list) {
        list = [];
        byScope.set(scope, list);
      }
      list.push({ admissionId: id, leaseUntilMs, progress });
    }
    await Promise.all(
      [...byScope].map(([scope, checkpoints]) =>
        this.store.keepReservations(scope, checkpoints).catch((err: unknown) => {
          // The store is away: the leases run on; if it stays away past them, a live process
          // settles these from their last checkpoint and this owner's settlement is skipped.
          for (const c of checkpoints) {
            const held = this.held.get(c.admissionId);
            if (held && c.progress) held.dirty = true;
          }
          log.warn({ err: String(err), scope }, "reservation heartbeat failed");
        }),
      ),
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
  }
}
