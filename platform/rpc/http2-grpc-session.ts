import * as http2 from "node:http2";
import type { Duplex } from "node:stream";

const ignore = () => {};

/**
 * The flow-control windows this client advertises for what a service sends it (responses:
 * audio). HTTP/2's defaults are 64 KiB for a stream and 64 KiB for the whole connection, so a
 * 96 kB clip took WINDOW_UPDATE frames in the middle of its response (a write here, a read
 * there, and the service waiting for them), and the streams of one connection shared 64 KiB.
 * A stream may now have 256 KiB in flight (5 s of 24 kHz PCM) and the connection 16 MiB. A
 * caller that stops reading still stops the service once its stream's window is full: the
 * stream window is what a slow client can leave buffered here, per stream (1 MiB measured no
 * better at 50 connections).
 */
export const STREAM_WINDOW_BYTES = 256 << 10;
export const CONNECTION_WINDOW_BYTES = 16 << 20;

/** How the client finds out that a peer stopped answering (RAILGATE_GRPC_* in platform/config/config.ts). */
export interface Http2Liveness {
  /** A connection with calls (or calls since the last tick) is pinged this often. */
  pingIntervalMs: number;
  /** A ping unanswered this long destroys the connection: its calls fail Unavailable. */
  pingTimeoutMs: number;
  /** A connection whose peer has not sent its HTTP/2 SETTINGS this long after dialling is dropped. */
  connectTimeoutMs: number;
}

/** What a connection tells the pool that made it. */
interface ConnectionOwner {
  ready(c: Http2Connection): void;
  gone(c: Http2Connection): void;
}

/** One HTTP/2 connection and the calls running on it. */
export class Http2Connection {
  /** False once the peer sent GOAWAY or the connection closed or failed: no new calls go here. */
  usable = true;
  /** Set once its pool stopped handing it out. */
  forgotten = false;
  /**
   * The peer's SETTINGS arrived: it speaks HTTP/2 and reads what it is sent. A call on a
   * connection that fails before this was never read by anyone, so it may go elsewhere.
   */
  ready = false;
  /** Why the connection failed (a refused or reset socket, an unanswered ping), for the calls it ends. */
  error: Error | undefined;
  private active = 0;
  /** A call started since the last keepalive tick (a short call between two ticks counts too). */
  private used = false;
  private readonly keepalive: NodeJS.Timeout;
  private connectTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly session: http2.ClientHttp2Session,
    readonly address: string,
    owner: ConnectionOwner,
    private readonly liveness: Http2Liveness,
  ) {
    // As grpc-js: an idle connection does not keep the process alive; a running call does.
    session.unref();
    const gone = () => {
      this.usable = false;
      this.stopTimers();
      owner.gone(this);
    };
    session.on("goaway", gone);
    session.on("close", gone);
    // A refused connection or a reset socket: each call on it ends with Unavailable
    // (http2-grpc-call.ts); without a listener this would be an uncaught exception.
    session.on("error", (err: Error) => {
      this.error ??= err;
      gone();
    });
    session.on("frameError", ignore);
    session.once("remoteSettings", () => {
      this.ready = true;
      clearTimeout(this.connectTimer);
      owner.ready(this);
    });
    // A TCP balancer (or a frozen process's kernel) accepts the socket whoever is behind it: only
    // the peer's own SETTINGS show that a live HTTP/2 server answers.
    this.connectTimer = setTimeout(
      () => this.fail(`no HTTP/2 answer within ${liveness.connectTimeoutMs} ms of connecting`),
      liveness.connectTimeoutMs,
    );
    this.connectTimer.unref();
    this.keepalive = setInterval(() => {
      if (this.active > 0 || this.used) this.probe();
      this.used = false;
    }, liveness.pingIntervalMs);
    this.keepalive.unref();
  }

  started(): void {
    this.used = true;
    if (this.active++ === 0) this.session.ref();
  }

  ended(): void {
    if (--this.active === 0) this.session.unref();
  }

  /**
   * Pings the peer unless a ping is already out: unanswered within the ping timeout, the
   * connection is destroyed and every call on it fails Unavailable. Run on the keepalive tick
   * and whenever a call on it passed its deadline or was given up unanswered.
   */
  probe(): void {
    if (this.pingTimer !== undefined || !this.ready || this.session.destroyed) return;
    const ms = this.liveness.pingTimeoutMs;
    this.pingTimer = setTimeout(() => this.fail(`keepalive ping not answered within ${ms} ms`), ms);
    this.pingTimer.unref();
    const answered = () => {
      clearTimeout(this.pingTimer);
      this.pingTimer = undefined;
    };
    try {
      if (!this.session.ping(answered)) answered();
    } catch {
      answered();
    }
  }

  /** Destroys the connection: its calls end Unavailable with `reason`. */
  private fail(reason: string): void {
    if (this.session.destroyed) return;
    this.error ??= new Error(reason);
    this.usable = false;
    this.session.destroy();
  }

  private stopTimers(): void {
    clearInterval(this.keepalive);
    clearTimeout(this.connectTimer);
    clearTimeout(this.pingTimer);
    this.pingTimer = undefined;
  }
}

/** Opens an HTTP/2 connection to one resolved address of the target. */
export type Dial = (address: string) => http2.ClientHttp2Session;

/** Makes a connection to `address` as the transport wants it (TLS or not, window sizes). */
export function dialer(
  origin: string,
  options: http2.SecureClientSessionOptions,
  socketTo: (address: string) => Duplex,
): Dial {
  return (address) => {
    const session = http2.connect(origin, {
      ...options,
      createConnection: () => socketTo(address),
      settings: { ...options.settings, initialWindowSize: STREAM_WINDOW_BYTES },
    });
    // The connection's own window can only be raised once the session is up.
    session.once("connect", () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    return session;
  };
}

/** Destroys every connection in `all` (the pool is closing). */
export function destroyAll(all: Iterable<Http2Connection>): void {
  for (const c of all) c.session.destroy();
}

export type { ConnectionOwner };
