import * as http2 from "node:http2";

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

/** One HTTP/2 connection and the calls running on it. */
export class Http2Connection {
  /** False once the peer sent GOAWAY or the connection closed or failed: no new calls go here. */
  usable = true;
  /** Set once its target stopped handing it out. */
  forgotten = false;
  /** Why the connection failed (a refused or reset socket), for the calls it ends. */
  error: Error | undefined;
  private active = 0;

  constructor(
    readonly session: http2.ClientHttp2Session,
    onGone: (c: Http2Connection) => void,
  ) {
    // As grpc-js: an idle connection does not keep the process alive; a running call does.
    session.unref();
    const gone = () => {
      this.usable = false;
      onGone(this);
    };
    session.on("goaway", gone);
    session.on("close", gone);
    // A refused connection or a reset socket: each call on it ends with Unavailable
    // (http2-grpc-call.ts); without a listener this would be an uncaught exception.
    session.on("error", (err: Error) => {
      this.error = err;
      gone();
    });
    session.on("frameError", ignore);
  }

  started(): void {
    if (this.active++ === 0) this.session.ref();
  }

  ended(): void {
    if (--this.active === 0) this.session.unref();
  }
}

/**
 * The connection to one target (a service's host and port) that every call
 * shares, as a grpc-js channel's subchannel: made on the first call, replaced
 * by a fresh one for new calls once the peer sends GOAWAY or it closes or
 * fails (calls already running on a closing one finish there). No keepalive
 * pings: the grpc-js channel this replaces had none configured.
 */
export class Http2Target {
  private current: Http2Connection | undefined;
  private closed = false;
  private readonly all = new Set<Http2Connection>();

  constructor(
    private readonly origin: string,
    private readonly options: http2.SecureClientSessionOptions,
  ) {}

  /** A connection that takes new calls; throws once the transport is closed. */
  connection(): Http2Connection {
    const c = this.current;
    if (c?.usable && !c.session.closed && !c.session.destroyed) return c;
    if (this.closed) throw new Error("the transport is closed");
    if (c) this.forget(c);
    const session = http2.connect(this.origin, {
      ...this.options,
      settings: { ...this.options.settings, initialWindowSize: STREAM_WINDOW_BYTES },
    });
    // The connection's own window can only be raised once the session is up.
    session.once("connect", () => session.setLocalWindowSize(CONNECTION_WINDOW_BYTES));
    const next = new Http2Connection(session, (gone) => this.forget(gone));
    this.current = next;
    this.all.add(next);
    return next;
  }

  /** Takes no new calls on this connection (it went away, or it refused a call). */
  forget(c: Http2Connection): void {
    c.usable = false;
    if (c.forgotten) return;
    c.forgotten = true;
    if (this.current === c) this.current = undefined;
    if (c.session.destroyed) this.all.delete(c);
    else c.session.once("close", () => this.all.delete(c));
    // A connection that no call uses any more is closed now, not left to the peer.
    if (!c.session.closed && !c.session.destroyed) c.session.close();
  }

  close(): void {
    this.closed = true;
    this.current = undefined;
    for (const c of this.all) c.session.destroy();
    this.all.clear();
  }
}
