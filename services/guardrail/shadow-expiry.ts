import { timestampDate, timestampMs } from "@bufbuild/protobuf/wkt";
import type { Guardrail } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import type {
  GetGuardrailShadowResponse,
  ShadowOutcomeCount,
} from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { toDelivery } from "../../governance/alerts/catch-up.js";
import { alertEvent, type ShadowExpiredData } from "../../governance/alerts/events.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { Page } from "../../store/types.js";
import type { WebhookStore } from "../../store/webhooks/types.js";
import { shadowExpired } from "./shadow.js";

const log = componentLogger("shadow-expiry");
const PAGE = 500;
/**
 * A shadow that expired longer ago than this is not announced (a process down that long, or a
 * webhook created since): its once key is kept this long past the expiry, so it fires once.
 */
export const SHADOW_EXPIRY_LOOKBACK_MS = 7 * 86_400_000;
/** Once keys this process already queued or found queued; cleared past this many. */
const MAX_REMEMBERED = 10_000;

export interface ShadowExpiryDeps {
  /** Every guardrail of every workspace, a page at a time (the store's listing). */
  listGuardrails(workspaceId: undefined, offset: number, limit: number): Promise<Page<Guardrail>>;
  /** The shadow's report as GET .../shadow answers it. */
  report(guardrailId: string): Promise<GetGuardrailShadowResponse>;
  webhooks: Pick<WebhookStore, "enabledWebhooks" | "enqueue">;
  /** Asks the delivery worker to send what was queued now. */
  kick(): void;
  clock?: Clock;
}

function changesJson(changes: readonly ShadowOutcomeCount[]) {
  return changes.map((c) => ({ live: c.live, shadow: c.shadow, count: Number(c.count) }));
}

/** The event's data: the report's counts as GET .../shadow shows them. */
export function shadowExpiredData(r: GetGuardrailShadowResponse): ShadowExpiredData {
  const s = r.shadow;
  return {
    update_mask: s?.updateMask ?? [],
    started_at: s?.startedAt ? timestampDate(s.startedAt).toISOString() : null,
    expires_at: s?.expiresAt ? timestampDate(s.expiresAt).toISOString() : null,
    outcomes_changed: Number(r.outcomesChanged),
    changes: changesJson(r.changes),
    affected_generation_ids: r.affectedGenerationIds,
    budget: {
      outcomes_changed: Number(r.budget?.outcomesChanged ?? 0n),
      changes: changesJson(r.budget?.changes ?? []),
      affected_generation_ids: r.budget?.affectedGenerationIds ?? [],
    },
  };
}

/**
 * Sends guardrail.shadow_expired once per shadow to every enabled webhook of its workspace.
 * Whoever notices the expiry first queues it: a periodic sweep of every guardrail in the control
 * plane, or a GET of the shadow's report. Once, across replicas and restarts, because the event
 * is queued with a once key (the guardrail and the shadow's start) that the database refuses
 * twice (store/webhooks); at least once, because the sweep keeps looking for every shadow that
 * expired within the lookback until each enabled webhook has it queued.
 */
export class ShadowExpirySweep {
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

  /** One look at every guardrail (coalesced with a look already running). */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepAll()
      .catch((err: unknown) => log.warn({ err: String(err) }, "shadow expiry sweep failed"))
      .finally(() => {
        this.sweeping = undefined;
      });
    return this.sweeping;
  }

  /** A report that says its shadow expired: its event is queued unless it already was. */
  async notice(workspaceId: string, guardrailId: string, r: GetGuardrailShadowResponse) {
    const nowMs = this.clock.now();
    const s = r.shadow;
    if (!r.expired || !s?.startedAt || !s.expiresAt) return;
    const expiresMs = timestampMs(s.expiresAt);
    if (expiresMs <= nowMs - SHADOW_EXPIRY_LOOKBACK_MS) return;
    const onceKey = onceKeyOf(guardrailId, timestampMs(s.startedAt));
    if (this.done.has(onceKey)) return;
    const now = new Date(nowMs);
    const data = { guardrail_id: guardrailId, shadow: shadowExpiredData(r) };
    const hooks = await this.deps.webhooks.enabledWebhooks(workspaceId);
    let queued = 0;
    for (const hook of hooks) {
      // One statement each: queued here, or already (by another replica, or before a restart).
      const [id] = await this.deps.webhooks.enqueue(
        [
          toDelivery({
            webhookId: hook.id,
            onceKey,
            keepUntil: new Date(expiresMs + SHADOW_EXPIRY_LOOKBACK_MS),
            event: alertEvent("guardrail.shadow_expired", workspaceId, now, data),
          }),
        ],
        now,
      );
      if (id) queued++;
    }
    if (this.done.size >= MAX_REMEMBERED) this.done.clear();
    this.done.add(onceKey);
    if (queued > 0) this.deps.kick();
  }

  private async sweepAll(): Promise<void> {
    for (let offset = 0; ; offset += PAGE) {
      const page = await this.deps.listGuardrails(undefined, offset, PAGE);
      const nowMs = this.clock.now();
      for (const g of page.items) {
        const s = g.shadow;
        if (!s?.startedAt || !s.expiresAt || !shadowExpired(s, nowMs)) continue;
        if (timestampMs(s.expiresAt) <= nowMs - SHADOW_EXPIRY_LOOKBACK_MS) continue;
        if (this.done.has(onceKeyOf(g.id, timestampMs(s.startedAt)))) continue;
        // One shadow's failure (its report, a webhook) must not keep the others from theirs.
        await this.deps
          .report(g.id)
          .then((r) => this.notice(g.workspaceId, g.id, r))
          .catch((err: unknown) =>
            log.warn({ err: String(err), guardrailId: g.id }, "shadow expiry not announced yet"),
          );
      }
      if (page.items.length < PAGE) return;
    }
  }
}

function onceKeyOf(guardrailId: string, startedAtMs: number): string {
  return `shadow_expired:${guardrailId}:${startedAtMs}`;
}
