import * as http2 from "node:http2";
import { componentLogger } from "./logger.js";

const log = componentLogger("grpc-client");

const {
  NGHTTP2_PROTOCOL_ERROR,
  NGHTTP2_FLOW_CONTROL_ERROR,
  NGHTTP2_FRAME_SIZE_ERROR,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_COMPRESSION_ERROR,
  NGHTTP2_ENHANCE_YOUR_CALM,
} = http2.constants;

/**
 * Stream reset codes that say the session itself is in trouble, not just the
 * one call: the peer refuses new streams (ENHANCE_YOUR_CALM once its session
 * memory is spent, REFUSED_STREAM), or the framing went wrong. Our own resets
 * (CANCEL when a client goes away, INTERNAL_ERROR from Connect's limits) are
 * not among them.
 */
const SESSION_FAILURE_CODES = new Set<number>([
  NGHTTP2_PROTOCOL_ERROR,
  NGHTTP2_FLOW_CONTROL_ERROR,
  NGHTTP2_FRAME_SIZE_ERROR,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_COMPRESSION_ERROR,
  NGHTTP2_ENHANCE_YOUR_CALM,
]);

export interface GrpcSessionManagerOptions {
  /** An idle session is closed after this long (connect-node's default too). */
  idleTimeoutMs?: number;
  sessionOptions?: http2.ClientSessionOptions | http2.SecureClientSessionOptions;
}

interface Session {
  conn: http2.ClientHttp2Session;
  connected: Promise<void>;
  streams: number;
  retired: boolean;
  idleTimer?: NodeJS.Timeout;
}

/**
 * The HTTP/2 sessions behind one internal gRPC transport (Connect's
 * `sessionManager` transport option), written for two failures seen with
 * connect-node's Http2SessionManager:
 *
 * - It could crash the process. A GOAWAY on an idle session makes it destroy
 *   the session with an error that Node emits a tick later; a request in
 *   between replaces the session and removes the error listener first, so the
 *   error is unhandled (connectrpc/connect-es#1768). Here every session keeps
 *   an "error" listener for its whole life, so no session error can ever be
 *   unhandled.
 * - A failed session was kept: after one oversized message the peer refused
 *   every new stream (ENHANCE_YOUR_CALM) and every tenant got 500s for minutes.
 *   Here a session that fails (error, GOAWAY, close, or a stream reset with a
 *   session-level code) is retired at once: the next request opens a fresh one,
 *   while streams already running on the old one finish on it.
 */
export class GrpcSessionManager {
  readonly authority: string;
  private current: Session | undefined;
  private readonly sessions = new Set<Session>();
  private readonly idleTimeoutMs: number;

  constructor(
    baseUrl: string,
    private readonly options: GrpcSessionManagerOptions = {},
  ) {
    this.authority = new URL(baseUrl).origin;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 15 * 60_000;
  }

  /** Sessions opened so far that are still open (for tests and logs). */
  get openSessions(): number {
    return this.sessions.size;
  }

  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, "signal">,
  ): Promise<http2.ClientHttp2Stream> {
    // A session can go away between picking it and opening a stream on it;
    // then the next attempt takes a fresh one.
    for (let attempt = 1; ; attempt++) {
      const session = this.usableSession();
      await session.connected;
      try {
        if (session.retired || session.conn.closed || session.conn.destroyed) {
          throw new Error("session closed before the stream could open");
        }
        const stream = session.conn.request(
          { ...headers, ":method": method, ":path": path },
          options,
        );
        this.track(session, stream);
        return stream;
      } catch (err) {
        this.retire(session, "could not open a stream");
        if (attempt >= 3) throw err;
      }
    }
  }

  /** No keep-alive pings on these loopback/internal hops, so nothing to note. */
  notifyResponseByteRead(): void {}

  /** Closes every session; running streams are cut. */
  close(): void {
    for (const s of this.sessions) {
      clearTimeout(s.idleTimer);
      s.retired = true;
      s.conn.destroy();
    }
    this.sessions.clear();
    this.current = undefined;
  }

  private usableSession(): Session {
    const s = this.current;
    if (s && !s.retired && !s.conn.closed && !s.conn.destroyed) return s;
    const fresh = this.open();
    this.current = fresh;
    return fresh;
  }

  private open(): Session {
    const conn = http2.connect(this.authority, this.options.sessionOptions);
    const session: Session = {
      conn,
      streams: 0,
      retired: false,
      connected: new Promise<void>((resolve, reject) => {
        conn.once("connect", () => resolve());
        conn.once("error", reject);
      }),
    };
    // Settled for whoever awaits it; never an unhandled rejection.
    session.connected.catch(() => {});
    // Kept for the session's whole life: no session error can reach the process.
    conn.on("error", (err) => {
      log.warn({ err, authority: this.authority }, "internal gRPC session failed");
      this.retire(session, "error");
    });
    // GOAWAY with NO_ERROR is a peer shutting down or recycling the session: routine.
    conn.on("goaway", (code: number) => this.retire(session, `GOAWAY (code ${code})`, code !== 0));
    conn.on("close", () => {
      clearTimeout(session.idleTimer);
      this.retire(session, "closed", false);
      this.sessions.delete(session);
    });
    // An idle session must not keep the process alive.
    conn.unref();
    this.sessions.add(session);
    this.armIdleTimer(session);
    return session;
  }

  private track(session: Session, stream: http2.ClientHttp2Stream): void {
    session.streams += 1;
    clearTimeout(session.idleTimer);
    if (session.streams === 1) session.conn.ref();
    stream.once("close", () => {
      session.streams -= 1;
      if (SESSION_FAILURE_CODES.has(stream.rstCode ?? 0)) {
        this.retire(session, `stream reset with HTTP/2 code ${stream.rstCode}`);
      }
      if (session.streams > 0) return;
      session.conn.unref();
      if (session.retired) session.conn.close();
      else this.armIdleTimer(session);
    });
  }

  private armIdleTimer(session: Session): void {
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(
      () => this.retire(session, "idle", false),
      this.idleTimeoutMs,
    ).unref();
  }

  /**
   * No new stream goes to this session. Its running streams finish (a graceful
   * close), after which it closes; the next request opens a new session.
   */
  private retire(session: Session, why: string, failed = true): void {
    if (this.current === session) this.current = undefined;
    if (session.retired) return;
    session.retired = true;
    if (failed) log.warn({ authority: this.authority, why }, "retiring internal gRPC session");
    if (!session.conn.closed && !session.conn.destroyed) session.conn.close();
  }
}
