import { budgetAlertsQueued } from "../../domain/metrics.js";
import { budgetDays, budgetWindow } from "../../domain/windows.js";
import type { BudgetRefusal } from "../../gen/railgate/speech/v1/speech_pb.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type Clock, systemClock } from "../../platform/time.js";
import { type Admission, counterId, type Settlement } from "../../store/admission.js";
import type { KeyUsage } from "../../store/key-usage.js";
import type { Store } from "../../store/types.js";
import type { WebhookStore } from "../../store/webhooks/types.js";
import type { Principal } from "../governance-cache.js";
import { type BudgetScope, keyEntity, memberEntity } from "../policy/budget-counters.js";
import { toMicros } from "../policy/money.js";
import type { BudgetSpec } from "../policy/types.js";
import { toDelivery } from "./catch-up.js";
import { type AlertWindow, windowOfDay } from "./events.js";
import {
  type AlertWebhook,
  creditAlerts,
  type DueAlert,
  exhaustedAlerts,
  exhaustedOnceKey,
  type LimitReading,
  thresholdAlerts,
  thresholdOnceKey,
} from "./thresholds.js";

const log = componentLogger("alerts");

/** A workspace's enabled webhooks are re-read at most this often per process. */
export const WEBHOOK_CACHE_MS = 5_000;
/** Workspaces waiting for a check at most; beyond, checks are dropped (and logged once a minute). */
const MAX_PENDING_WORKSPACES = 10_000;
/** Workspaces checked at once. */
const CHECK_CONCURRENCY = 4;
/** Once keys remembered in process (so a reached threshold costs no read until its window ends). */
const MAX_REMEMBERED = 100_000;

/** What the speech service hands over once a request's settlement is written. */
export interface SettledRequest {
  principal: Principal;
  admission: Admission;
  actual: Settlement;
  metered: boolean;
}

/** What the speech service hands over when a budget refuses a request. */
export interface RefusedRequest {
  principal: Principal;
  /** The budget's figures, as the refusal's record keeps them. */
  refusal: BudgetRefusal;
  /** Admission's time: the window the refusal belongs to. */
  at: Date;
}

/** The seam the speech service calls; it never waits for it and it never throws. */
export interface SettlementAlerts {
  settled(request: SettledRequest): void;
  /** A budget refused a request: the budget is used up for its window. */
  budgetRefused(request: RefusedRequest): void;
}

interface CounterCheck {
  guardrailId: string;
  /** Set when the budget is a guardrail policy's. */
  policyId: string | null;
  entity: string;
  scope: BudgetScope;
  interval: BudgetSpec["interval"];
  firstDay: number;
  day: number;
  limitMicros: number;
}

/** What settlements since the last check of a workspace changed. */
interface PendingCheck {
  counters: Map<string, CounterCheck>;
  /** key hash -> its limit in micro-USD and the window it resets with. */
  keyLimits: Map<string, { limitMicros: number; window: AlertWindow; includesByok: boolean }>;
  credits: boolean;
  /** Budgets that refused a request, by counter (their figures: no read needed). */
  exhausted: Map<string, LimitReading>;
}

/** A key limit without limit_reset: one window for the key's whole life (fires once per key). */
const ALL_TIME: AlertWindow = { interval: "all_time", id: "all", start: null, end: null };

/**
 * The window of a key limit: all-time, or with limit_reset the window admission checked,
 * named by its counter (`...:daily:2026-11-26`: the interval and the window's first day).
 */
function keyLimitWindowOf(admission: Admission): AlertWindow {
  const counter = admission.keyLimitWindow;
  const interval = counter?.creditWindow;
  const first = counter?.suffix.split(":").at(-1);
  if (!interval || !first) return ALL_TIME;
  const w = budgetWindow(interval, new Date(`${first}T00:00:00.000Z`));
  return { interval, id: w.id, start: w.start, end: w.end };
}

/**
 * A key limit window's settled spend, from the key's usage read at the window's start: credit
 * spend, plus BYOK spend when the limit includes it (as admission checks it).
 */
function keyLimitSpend(usage: KeyUsage, window: AlertWindow, includesByok: boolean): number {
  const byok = (micros: number) => (includesByok ? micros : 0);
  switch (window.interval) {
    case "daily":
      return usage.dailyMicros + byok(usage.byokDailyMicros);
    case "weekly":
      return usage.weeklyMicros + byok(usage.byokWeeklyMicros);
    case "monthly":
      return usage.monthlyMicros + byok(usage.byokMonthlyMicros);
    default:
      return usage.totalMicros + byok(usage.byokTotalMicros);
  }
}

/** The budget layer of a counter, named as budgetCounters (and Explain) name it. */
function scopeOf(source: BudgetSpec["source"], entity: string): BudgetScope {
  const member = entity.startsWith("member:");
  if (source === "workspace_default")
    return member ? "workspace_default_member" : "workspace_default_key";
  return source === "member" ? "member" : "api_key";
}

function entityParts(entity: string): { keyHash: string | null; member: string | null } {
  return entity.startsWith("key:")
    ? { keyHash: entity.slice(4), member: null }
    : { keyHash: null, member: entity.slice("member:".length) };
}

/**
 * Turns settlements into budget alerts, off the hot path: the speech service
 * hands over what it settled and goes on; the detector merges settlements per
 * workspace, then reads only the counters they touched (one round trip per
 * kind), and only for workspaces with an enabled webhook and thresholds not yet
 * fired in the window. Deciding "once" is the database's: each due alert is
 * inserted with a once key that a unique constraint keeps single across
 * replicas; the process only remembers what it saw fired to skip reads.
 */
export class AlertDetector implements SettlementAlerts {
  private readonly hooks = new Map<string, { at: number; hooks: Promise<AlertWebhook[]> }>();
  private readonly pending = new Map<string, PendingCheck>();
  private readonly fired = new Set<string>();
  private running = 0;
  private scheduled = false;
  private lastDropLog = 0;
  private readonly idle: (() => void)[] = [];

  constructor(
    private readonly store: Store,
    private readonly webhooks: WebhookStore,
    private readonly options: { clock?: Clock; onQueued?: () => void; cacheMs?: number } = {},
  ) {}

  private now(): Date {
    return new Date((this.options.clock ?? systemClock).now());
  }

  settled({ principal, admission, actual, metered }: SettledRequest): void {
    try {
      const counters: CounterCheck[] = [];
      admission.budgets.forEach((b, i) => {
        // settlement() lists the budgets in admission's order; a mismatch is skipped, not guessed.
        const settled = actual.budgets[i];
        if (b.limitMicros <= 0 || !settled?.amountMicros) return;
        if (settled.guardrailId !== b.guardrailId || settled.entity !== b.entity) return;
        const spec = principal.policy.budgets.find((x) => x.guardrailId === b.guardrailId);
        if (!spec) return;
        counters.push({
          guardrailId: b.guardrailId,
          policyId: spec.policy ? spec.guardrailId : null,
          entity: b.entity,
          scope: scopeOf(spec.source, b.entity),
          interval: spec.interval,
          firstDay: b.firstDay,
          day: b.day,
          limitMicros: b.limitMicros,
        });
      });
      const keyLimit =
        admission.keyLimitMicros !== undefined &&
        admission.keyLimitMicros > 0 &&
        (actual.keyMicros > 0 ||
          (admission.keyLimitIncludesByok === true && (actual.byokMicros ?? 0) > 0))
          ? admission.keyLimitMicros
          : undefined;
      const credits = metered && actual.creditMicros > 0;
      if (counters.length === 0 && keyLimit === undefined && !credits) return;
      let check = this.pending.get(admission.scope);
      if (!check) {
        if (this.pending.size >= MAX_PENDING_WORKSPACES) {
          this.dropped();
          return;
        }
        check = this.newCheck(admission.scope);
        if (!check) return;
      }
      for (const c of counters) check.counters.set(counterId(c), c);
      if (keyLimit !== undefined)
        check.keyLimits.set(admission.keyHash, {
          limitMicros: keyLimit,
          window: keyLimitWindowOf(admission),
          includesByok: admission.keyLimitIncludesByok === true,
        });
      check.credits ||= credits;
      this.schedule();
    } catch (err) {
      log.warn({ err: String(err) }, "settlement not checked for budget alerts");
    }
  }

  budgetRefused({ principal, refusal, at }: RefusedRequest): void {
    try {
      const spec = principal.policy.budgets.find((x) => x.guardrailId === refusal.guardrailId);
      if (!spec) return;
      const entity =
        refusal.scope === "member"
          ? memberEntity(refusal.memberUserId)
          : keyEntity(principal.key.hash);
      const reading: LimitReading = {
        scope: scopeOf(spec.source, entity),
        guardrailId: refusal.guardrailId,
        policyId: spec.policy ? spec.guardrailId : null,
        ...entityParts(entity),
        spentMicros: toMicros(refusal.spentUsd),
        limitMicros: toMicros(refusal.limitUsd),
        window: windowOfDay(spec.interval, budgetDays(spec.interval, at).today),
      };
      // Refusals repeat until the window ends: once its alerts went out, they cost nothing here.
      if (this.fired.has(exhaustedOnceKey(reading))) return;
      const check = this.pending.get(principal.scope) ?? this.newCheck(principal.scope);
      if (!check) return;
      check.exhausted.set(`${refusal.guardrailId}/${entity}`, reading);
      this.schedule();
    } catch (err) {
      log.warn({ err: String(err) }, "budget refusal not checked for budget alerts");
    }
  }

  /** A workspace's pending check, or none when too many workspaces wait already. */
  private newCheck(scope: string): PendingCheck | undefined {
    if (this.pending.size >= MAX_PENDING_WORKSPACES) {
      this.dropped();
      return undefined;
    }
    const check: PendingCheck = {
      counters: new Map(),
      keyLimits: new Map(),
      credits: false,
      exhausted: new Map(),
    };
    this.pending.set(scope, check);
    return check;
  }

  private dropped(): void {
    const now = Date.now();
    if (now - this.lastDropLog < 60_000) return;
    this.lastDropLog = now;
    log.warn({ pending: this.pending.size }, "budget alert checks dropped: too many waiting");
  }

  /** Checks start on a later turn of the event loop: the caller's turn only records. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
      this.wakeIdle();
    });
  }

  private pump(): void {
    while (this.running < CHECK_CONCURRENCY && this.pending.size > 0) {
      const [scope, check] = this.pending.entries().next().value as [string, PendingCheck];
      this.pending.delete(scope);
      this.running++;
      this.check(scope, check)
        .catch((err) =>
          log.warn({ err: String(err), workspaceId: scope }, "budget alert check failed"),
        )
        .finally(() => {
          this.running--;
          this.pump();
          this.wakeIdle();
        });
    }
  }

  private get isIdle(): boolean {
    return this.running === 0 && this.pending.size === 0 && !this.scheduled;
  }

  private wakeIdle(): void {
    if (this.isIdle) for (const done of this.idle.splice(0)) done();
  }

  /** Resolves once every check handed over so far is done (tests, shutdown). */
  whenIdle(): Promise<void> {
    if (this.isIdle) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private enabledHooks(scope: string): Promise<AlertWebhook[]> {
    const now = Date.now();
    const hit = this.hooks.get(scope);
    if (hit && now - hit.at < (this.options.cacheMs ?? WEBHOOK_CACHE_MS)) return hit.hooks;
    const hooks = this.webhooks.enabledWebhooks(scope).then((rows) =>
      rows.map((r) => ({
        id: r.id,
        workspaceId: r.workspaceId,
        thresholdsPct: r.thresholdsPct,
        creditsBelowUsd: r.creditsBelowUsd,
      })),
    );
    // A failed read is not cached: the next settlement asks again.
    hooks.catch(() => this.hooks.delete(scope));
    if (this.hooks.size > MAX_PENDING_WORKSPACES) this.hooks.clear();
    this.hooks.set(scope, { at: now, hooks });
    return hooks;
  }

  /** True when some webhook still has a threshold of this reading's window to fire. */
  private unfired(r: LimitReading, hooks: AlertWebhook[]): boolean {
    return hooks.some((h) =>
      h.thresholdsPct.some((pct) => !this.fired.has(`${h.id}|${thresholdOnceKey(r, pct)}`)),
    );
  }

  private async check(scope: string, check: PendingCheck): Promise<void> {
    const hooks = await this.enabledHooks(scope);
    if (hooks.length === 0) return;
    const now = this.now();
    const due: DueAlert[] = [];

    // Guardrail budgets: every counter the settlements charged, in one read.
    const toRead: { counter: CounterCheck; reading: LimitReading }[] = [];
    for (const counter of check.counters.values()) {
      const reading: LimitReading = {
        scope: counter.scope,
        guardrailId: counter.guardrailId,
        policyId: counter.policyId,
        ...entityParts(counter.entity),
        spentMicros: 0,
        limitMicros: counter.limitMicros,
        window: windowOfDay(counter.interval, counter.day),
      };
      if (this.unfired(reading, hooks)) toRead.push({ counter, reading });
    }
    if (toRead.length > 0) {
      const spent = await this.store.getSpend(
        scope,
        toRead.map(({ counter: c }) => ({
          guardrailId: c.guardrailId,
          entity: c.entity,
          firstDay: c.firstDay,
          lastDay: c.day,
        })),
      );
      toRead.forEach(({ reading }, i) => {
        reading.spentMicros = spent[i] ?? 0;
        due.push(...thresholdAlerts(scope, reading, hooks, now));
      });
    }

    // Budgets that refused: used up for their window, whatever their settled spend says.
    const exhausted: string[] = [];
    for (const reading of check.exhausted.values()) {
      const alerts = exhaustedAlerts(scope, reading, hooks, now);
      if (alerts.length === 0) continue;
      due.push(...alerts);
      exhausted.push(exhaustedOnceKey(reading));
    }

    // Key limits: all-time, or per limit_reset window.
    for (const [keyHash, { limitMicros, window, includesByok }] of check.keyLimits) {
      const reading: LimitReading = {
        scope: "key_limit",
        guardrailId: null,
        keyHash,
        member: null,
        spentMicros: 0,
        limitMicros,
        window,
      };
      if (!this.unfired(reading, hooks)) continue;
      // Read at the window's start, so the counters read are that window's whatever the clock.
      const usage = await this.store.getKeyUsage(scope, keyHash, window.start ?? now);
      reading.spentMicros = keyLimitSpend(usage, window, includesByok);
      due.push(...thresholdAlerts(scope, reading, hooks, now));
    }

    // Credits: read the balance only when some webhook watches it.
    if (check.credits && hooks.some((h) => h.creditsBelowUsd !== null)) {
      const balance = await this.store.getCredits(scope);
      if (balance !== undefined) {
        const added = await this.store.getCreditsAdded(scope);
        due.push(...creditAlerts(scope, balance, added, hooks, now));
      }
    }

    const fresh = due.filter((a) => !this.fired.has(`${a.webhookId}|${a.onceKey}`));
    // Once their alerts are queued, later refusals of these budgets in the window skip the check.
    const rememberExhausted = () => {
      for (const key of exhausted) this.fired.add(key);
    };
    if (fresh.length === 0) {
      rememberExhausted();
      return;
    }
    if (this.fired.size + fresh.length > MAX_REMEMBERED) this.fired.clear();
    let queued = 0;
    for (const a of fresh) {
      // One statement each (see enqueue): queued here, or already by another replica.
      const [id] = await this.webhooks.enqueue([toDelivery(a)], now);
      if (id) {
        queued++;
        budgetAlertsQueued.labels(a.event.type).inc();
      }
      // Either way it is done for this window.
      this.fired.add(`${a.webhookId}|${a.onceKey}`);
    }
    rememberExhausted();
    if (queued > 0) {
      log.info({ workspaceId: scope, queued }, "budget alerts queued");
      this.options.onQueued?.();
    }
  }
}
