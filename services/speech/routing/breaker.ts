import type { BreakerStateName } from "../../../domain/enums.js";

/** An endpoint's circuit: closed (serving), open (skipped), half_open (one probe in flight). */
export type BreakerState = BreakerStateName;

export interface BreakerOptions {
  /** Consecutive failures that open the circuit; 0 turns breakers off (every request may try). */
  failures: number;
  /** How long an open circuit skips its endpoint before one request may probe it. */
  cooldownMs: number;
  now?: () => number;
  /** Told of every change of state (the metrics gauge). */
  onState?: (key: string, state: BreakerState) => void;
}

/** What acquire() answers: try it (as the probe of an open circuit, or not), or skip it and why. */
export type Gate = { allowed: true; probe: boolean } | { allowed: false; reason: string };

interface Entry {
  failures: number;
  openedAt: number;
  probing: boolean;
}

/**
 * One circuit breaker per endpoint, in this process (each speech replica learns on its own: no
 * shared state to lose or to wait for). After `failures` consecutive failures an endpoint is
 * skipped for `cooldownMs`; then the next request that reaches it is let through as the one
 * probe (others keep skipping it meanwhile): success closes the circuit, failure opens it again
 * for a fresh cool-down. A success at any time resets the count.
 */
export class CircuitBreakers {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;

  constructor(private readonly options: BreakerOptions) {
    this.now = options.now ?? Date.now;
  }

  private entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { failures: 0, openedAt: 0, probing: false };
      this.entries.set(key, e);
    }
    return e;
  }

  private isOpen(e: Entry): boolean {
    return this.options.failures > 0 && e.failures >= this.options.failures;
  }

  state(key: string): BreakerState {
    const e = this.entries.get(key);
    if (!e || !this.isOpen(e)) return "closed";
    return e.probing ? "half_open" : "open";
  }

  consecutiveFailures(key: string): number {
    return this.entries.get(key)?.failures ?? 0;
  }

  /** Whether a request may try the endpoint now. A probe must end in succeeded, failed or released. */
  acquire(key: string): Gate {
    const e = this.entries.get(key);
    if (!e || !this.isOpen(e)) return { allowed: true, probe: false };
    if (e.probing)
      return { allowed: false, reason: "circuit breaker half-open: a probe is in flight" };
    const left = e.openedAt + this.options.cooldownMs - this.now();
    if (left > 0) {
      return {
        allowed: false,
        reason: `circuit breaker open: ${e.failures} consecutive failures, cooling down ${Math.ceil(left / 1000)} s more`,
      };
    }
    e.probing = true;
    this.options.onState?.(key, "half_open");
    return { allowed: true, probe: true };
  }

  succeeded(key: string): void {
    const e = this.entries.get(key);
    if (!e || (e.failures === 0 && !e.probing)) return;
    const was = this.state(key);
    e.failures = 0;
    e.probing = false;
    if (was !== "closed") this.options.onState?.(key, "closed");
  }

  failed(key: string): void {
    const e = this.entry(key);
    const was = this.state(key);
    e.failures++;
    e.probing = false;
    if (this.isOpen(e)) {
      // Opening, or a failed probe: a fresh cool-down either way.
      e.openedAt = this.now();
      if (was !== "open") this.options.onState?.(key, "open");
    }
  }

  /** A probe that ended without an answer (its client went away): the next request probes. */
  released(key: string): void {
    const e = this.entries.get(key);
    if (!e?.probing) return;
    e.probing = false;
    this.options.onState?.(key, "open");
  }
}
