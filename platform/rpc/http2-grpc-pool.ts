import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import {
  type ConnectionOwner,
  type Dial,
  destroyAll,
  Http2Connection,
  type Http2Liveness,
} from "./http2-grpc-session.js";

/** The pool's settings: how to tell a dead peer, and how many connections to spread calls over. */
export interface Http2PoolOptions extends Http2Liveness {
  /** Connections to each address the target's name resolves to. */
  connectionsPerAddress: number;
}

/** A name is looked up again this often (a Kubernetes headless Service's pods come and go). */
const RESOLVE_INTERVAL_MS = 30_000;
/** After a failure, a look-up again at most this often. */
const RESOLVE_MIN_GAP_MS = 1_000;
/** The wait before dialling a slot again after its n-th failure in a row: base * 2^(n-1), capped. */
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 10_000;

/** A place for one connection to one address; empty while it waits out its backoff. */
interface Slot {
  address: string;
  connection: Http2Connection | undefined;
  failures: number;
  /** performance.now() before which the slot is not dialled again. */
  retryAt: number;
}

/**
 * The connections to one target (a service's host and port) that every call shares, as a
 * grpc-js channel's subchannels: `connectionsPerAddress` connections to each address the host
 * resolves to (every pod of a headless Service; several connections through one balancer
 * address reach several replicas), looked up again every 30 s and after a failure. A call
 * takes the next ready connection in turn; a connection still connecting only when none is
 * ready. A connection that fails is dialled again after a backoff (doubling from 250 ms to
 * 10 s, with jitter) while another connection is ready or connecting (else at once: a lone
 * service that comes back serves the next call); one whose peer sent GOAWAY or closed cleanly,
 * at once, on the next call.
 * Calls already running on a closing one finish there.
 */
export class Http2Target implements ConnectionOwner {
  private slots: Slot[] = [];
  private cursor = 0;
  private closed = false;
  /** Connections no slot holds any more, closing once their calls end. */
  private readonly draining = new Set<Http2Connection>();
  private readonly host: string;
  private resolving: Promise<void> | undefined;
  private lastResolve = Number.NEGATIVE_INFINITY;
  private readonly refresh: NodeJS.Timeout | undefined;
  /** Why the last connection or look-up failed, for calls that find nothing to go to. */
  lastError: Error | undefined;
  /** False until the host's first look-up is done (calls wait for it: `whenResolved`). */
  resolved: boolean;
  private waiting: (() => void)[] = [];

  constructor(
    host: string,
    private readonly dial: Dial,
    private readonly options: Http2PoolOptions,
  ) {
    this.host = host.replace(/^\[|\]$/g, "");
    this.resolved = isIP(this.host) !== 0;
    if (this.resolved) this.setAddresses([this.host]);
    else {
      this.refresh = setInterval(() => void this.resolve(), RESOLVE_INTERVAL_MS);
      this.refresh.unref();
    }
  }

  /** Runs `then` once the host has been looked up (at once when it has). */
  whenResolved(then: () => void): void {
    if (this.resolved) {
      then();
      return;
    }
    this.waiting.push(then);
    void this.resolve();
  }

  /**
   * A connection for a new call: the next ready one in turn, else one still connecting (dialling
   * every empty slot whose backoff is over), else a fresh dial of the slot due soonest (its
   * failure fails the call Unavailable at once rather than have it wait); undefined only once
   * the pool is closed. `pin` >= 0 asks for the pin-th ready connection,
   * so a health check can ask each of them.
   */
  connection(pin = -1): Http2Connection | undefined {
    const slots = this.slots;
    const n = slots.length;
    if (pin >= 0) {
      let seen = 0;
      const ready = this.readyCount();
      for (let i = 0; i < n && ready > 0; i++) {
        const c = (slots[i] as Slot).connection;
        if (c?.ready && c.usable && seen++ === pin % ready) return c;
      }
    }
    let fallback: Http2Connection | undefined;
    let now = -1;
    for (let i = 0; i < n; i++) {
      const at = (this.cursor + i) % n;
      const slot = slots[at] as Slot;
      let c = slot.connection;
      if (c === undefined) {
        if (this.closed) break;
        if (now < 0) now = performance.now();
        if (now < slot.retryAt) continue;
        c = this.open(slot);
      }
      if (!c.usable) continue;
      if (c.ready) {
        this.cursor = (at + 1) % n;
        return c;
      }
      fallback ??= c;
    }
    if (fallback !== undefined || this.closed || n === 0) return fallback;
    // Nothing ready or connecting: one dial now, whatever the backoff, so a service that came
    // back (a thawed or restarted single replica) serves the next call instead of a 503.
    let soonest: Slot | undefined;
    for (const slot of slots) {
      if (slot.connection === undefined && slot.retryAt < (soonest?.retryAt ?? Infinity)) {
        soonest = slot;
      }
    }
    return soonest ? this.open(soonest) : undefined;
  }

  /** Ready connections now: how many distinct paths a health check can take (at least 1). */
  paths(): number {
    return Math.max(1, this.readyCount());
  }

  /** Takes no new calls on this connection (it went away, or it refused a call); no backoff. */
  forget(c: Http2Connection): void {
    c.usable = false;
    if (c.forgotten) return;
    c.forgotten = true;
    for (const slot of this.slots) if (slot.connection === c) slot.connection = undefined;
    if (!c.session.destroyed) {
      this.draining.add(c);
      c.session.once("close", () => this.draining.delete(c));
    }
    // A connection that no call uses any more is closed now, not left to the peer.
    if (!c.session.closed && !c.session.destroyed) c.session.close();
  }

  ready(c: Http2Connection): void {
    const slot = this.slots.find((s) => s.connection === c);
    if (slot) slot.failures = 0;
  }

  gone(c: Http2Connection): void {
    const slot = this.slots.find((s) => s.connection === c);
    if (c.error && slot) {
      // A failure (refused, reset, silent): wait before dialling that slot again, and look the
      // name up again in case the address went away with its pod.
      this.lastError = c.error;
      slot.failures++;
      const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (slot.failures - 1));
      slot.retryAt = performance.now() + wait * (0.5 + Math.random() / 2);
      void this.resolve(true);
    }
    this.forget(c);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.refresh);
    destroyAll(this.draining);
    destroyAll(this.slots.flatMap((s) => (s.connection ? [s.connection] : [])));
    this.draining.clear();
    for (const s of this.slots) s.connection = undefined;
    this.flushWaiting();
  }

  private readyCount(): number {
    let ready = 0;
    for (const s of this.slots) if (s.connection?.ready && s.connection.usable) ready++;
    return ready;
  }

  private open(slot: Slot): Http2Connection {
    const c = new Http2Connection(this.dial(slot.address), slot.address, this, this.options);
    slot.connection = c;
    return c;
  }

  /** Looks the host up (at most once a second after a failure) and adopts its addresses. */
  private resolve(afterFailure = false): Promise<void> {
    if (isIP(this.host) !== 0 || this.closed) return Promise.resolve();
    if (this.resolving) return this.resolving;
    const now = performance.now();
    if (afterFailure && now - this.lastResolve < RESOLVE_MIN_GAP_MS) return Promise.resolve();
    this.lastResolve = now;
    this.resolving = lookup(this.host, { all: true })
      .then(
        (found) => {
          const addresses = [...new Set(found.map((a) => a.address))];
          if (addresses.length > 0) this.setAddresses(addresses);
        },
        (err: Error) => {
          // Keep the addresses already known: a DNS hiccup must not drop working connections.
          this.lastError = err;
        },
      )
      .finally(() => {
        this.resolving = undefined;
        this.resolved = true;
        this.flushWaiting();
      });
    return this.resolving;
  }

  private flushWaiting(): void {
    const waiting = this.waiting;
    this.waiting = [];
    for (const then of waiting) then();
  }

  /** Keeps the slots of addresses still there, drains those of addresses gone, adds new ones. */
  private setAddresses(addresses: string[]): void {
    if (this.closed) return;
    const keep: Slot[] = [];
    for (const slot of this.slots) {
      if (addresses.includes(slot.address)) keep.push(slot);
      else if (slot.connection) this.forget(slot.connection);
    }
    for (const address of addresses) {
      if (keep.some((s) => s.address === address)) continue;
      for (let i = 0; i < this.options.connectionsPerAddress; i++) {
        keep.push({ address, connection: undefined, failures: 0, retryAt: 0 });
      }
    }
    this.slots = keep;
    if (this.cursor >= keep.length) this.cursor = 0;
  }
}
