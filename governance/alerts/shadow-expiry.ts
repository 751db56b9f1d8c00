import type {
  ShadowBudgetReport,
  ShadowOutcomeCount,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { WebhookStore } from "../../store/webhooks/types.js";
import { toDelivery } from "./catch-up.js";
import {
  type AlertEventData,
  type AlertEventType,
  alertEvent,
  type ShadowExpiredData,
} from "./events.js";

const log = componentLogger("shadow-expiry");
/**
 * A shadow that expired longer ago than this is not announced (a process down that long, or a
 * webhook created since): its once key is kept this long past the expiry, so it fires once.
 */
export const SHADOW_EXPIRY_LOOKBACK_MS = 7 * 86_400_000;
/** Once keys this process already queued or found queued; cleared past this many. */
const MAX_REMEMBERED = 10_000;

/** A shadow as stored: whose it is and when it runs. */
export interface ShadowSeen {
  workspaceId: string;
  /** Names the shadow (its owner and its start): refused a second time by the database. */
  onceKey: string;
  expiresAtMs: number;
}

/** A shadow's report as its expiry's event announces it. */
export interface ShadowNotice extends ShadowSeen {
  type: Extract<
    AlertEventType,
    "guardrail.shadow_expired" | "guardrail_policy.shadow_expired" | "account_policy.shadow_expired"
  >;
  /** The report says it expired (a report of a running shadow announces nothing). */
  expired: boolean;
  /** Who owns the shadow (the ids) and its report's counts. */
  data: Partial<AlertEventData>;
}

/** A shadow the sweep found, and how to read its report when it has expired. */
export interface ShadowFound extends ShadowSeen {
  /** Undefined when the shadow is gone or changed meanwhile (nothing to announce). */
  report(): Promise<ShadowNotice | undefined>;
  /** What a failure is logged with. */
  logged: Record<string, string>;
}

/** Where the sweep finds shadows: every guardrail, every workspace's policy document. */
export interface ShadowSource {
  /** Hands each stored shadow to `found`, a page at a time. */
  scan(found: (s: ShadowFound) => Promise<void>): Promise<void>;
}

export interface ShadowExpiryDeps {
  sources: readonly ShadowSource[];
  webhooks: Pick<WebhookStore, "enabledWebhooks" | "enqueue">;
  /** Asks the delivery worker to send what was queued now. */
  kick(): void;
  clock?: Clock;
}

/** What a shadow report counts: a guardrail's and a policy's report share these. */
export interface ShadowReportCounts {
  outcomesChanged: bigint;
  changes: readonly ShadowOutcomeCount[];
  affectedGenerationIds: readonly string[];
  budget?: ShadowBudgetReport;
}

function changesJson(changes: readonly ShadowOutcomeCount[]) {
  return changes.map((c) => ({ live: c.live, shadow: c.shadow, count: Number(c.count) }));
}

/** The event's `shadow`: the report's counts as its GET shows them. */
export function shadowExpiredData(
  r: ShadowReportCounts,
  shadow: { updateMask: string[]; startedAt: Date | undefined; expiresAt: Date | undefined },
): ShadowExpiredData {
  return {
    update_mask: shadow.updateMask,
    started_at: shadow.startedAt?.toISOString() ?? null,
    expires_at: shadow.expiresAt?.toISOString() ?? null,
    outcomes_changed: Number(r.outcomesChanged),
    changes: changesJson(r.changes),
    affected_generation_ids: [...r.affectedGenerationIds],
    budget: {
      outcomes_changed: Number(r.budget?.outcomesChanged ?? 0n),
      changes: changesJson(r.budget?.changes ?? []),
      affected_generation_ids: r.budget?.affectedGenerationIds ?? [],
    },
  };
}

/**
 * Sends a shadow's expiry once per shadow to every enabled webhook of its workspace: a
 * guardrail's (guardrail.shadow_expired) and a guardrail policy's
 * (guardrail_policy.shadow_expired). Whoever notices the expiry first queues it: a periodic
 * sweep of every stored shadow in the control plane, or a GET of the shadow's report. Once,
 * across replicas and restarts, because the event is queued with a once key (the owner and the
 * shadow's start) that the database refuses twice (store/webhooks); at least once, because the
 * sweep keeps looking for every shadow that expired within the lookback until each enabled
 * webhook has it queued.
 */
export class ShadowExpiryAnnouncer {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private readonly done = new Set<string>();
  private readonly clock: Clock;

  constructor(
    private readonly deps: ShadowExpiryDeps,
    private readonly intervalMs: number,
  ) {
    this.clock = deps.clock ?? systemClock;
  }

  start(): void {
    this.timer = setInterval(() => void this.sweep(), this.intervalMs);
    this.timer.unref();
    void this.sweep();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** One look at every stored shadow (coalesced with a look already running). */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepAll().finally(() => {
      this.sweeping = undefined;
    });
    return this.sweeping;
  }

  /** A report that says its shadow expired: its event is queued unless it already was. */
  async notice(n: ShadowNotice | undefined): Promise<void> {
    const nowMs = this.clock.now();
    if (!n?.expired || this.passed(n, nowMs)) return;
    const now = new Date(nowMs);
    const hooks = await this.deps.webhooks.enabledWebhooks(n.workspaceId);
    let queued = 0;
    for (const hook of hooks) {
      // One statement each: queued here, or already (by another replica, or before a restart).
      const [id] = await this.deps.webhooks.enqueue(
        [
          toDelivery({
            webhookId: hook.id,
            onceKey: n.onceKey,
            keepUntil: new Date(n.expiresAtMs + SHADOW_EXPIRY_LOOKBACK_MS),
            event: alertEvent(n.type, n.workspaceId, now, n.data),
          }),
        ],
        now,
      );
      if (id) queued++;
    }
    if (this.done.size >= MAX_REMEMBERED) this.done.clear();
    this.done.add(n.onceKey);
    if (queued > 0) this.deps.kick();
  }

  /** Announced already (by this process), or expired past the lookback. */
  private passed(s: ShadowSeen, nowMs: number): boolean {
    return s.expiresAtMs <= nowMs - SHADOW_EXPIRY_LOOKBACK_MS || this.done.has(s.onceKey);
  }

  private async sweepAll(): Promise<void> {
    for (const source of this.deps.sources) {
      // A source that cannot be listed (its store away) must not keep the others from theirs.
      await source
        .scan(async (s) => {
          const nowMs = this.clock.now();
          if (s.expiresAtMs > nowMs || this.passed(s, nowMs)) return;
          // Nor must one shadow's failure (its report, a webhook).
          await s
            .report()
            .then((n) => this.notice(n))
            .catch((err: unknown) =>
              log.warn({ err: String(err), ...s.logged }, "shadow expiry not announced yet"),
            );
        })
        .catch((err: unknown) => log.warn({ err: String(err) }, "shadow expiry sweep failed"));
    }
  }
}
