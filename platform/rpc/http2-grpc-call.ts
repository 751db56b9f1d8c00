import {
  type ClientHttp2Stream,
  constants,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader,
  type OutgoingHttpHeaders,
} from "node:http2";
import { Code, ConnectError } from "@connectrpc/connect";
import { findTrailerError } from "@connectrpc/connect/protocol-grpc";
import type { Http2Target } from "./http2-grpc-pool.js";
import type { Http2Connection } from "./http2-grpc-session.js";

/** What a call reports, in this order: its response header (unless trailers-only), messages, its end. */
export interface CallListener {
  onHeader(header: Headers): void;
  /** One message's bytes (a view into the received data: read, not kept past the call). */
  onMessage(bytes: Uint8Array): void;
  /** The call's end: its error (none when OK) and its trailers (without grpc-status and grpc-message). */
  onEnd(error: ConnectError | undefined, trailer: Headers): void;
}

export interface CallOptions {
  /** The request's metadata as HTTP/2 headers (the protocol's own are added here). */
  headers: OutgoingHttpHeaders;
  /** The whole request body: one message behind its 5-byte prefix. */
  body: Buffer;
  timeoutMs: number | undefined;
  signal: AbortSignal;
  maxMessageBytes: number;
  /** >= 0: on the pin-th ready connection of the target (a health check asking each path). */
  pin?: number;
}

/**
 * Times a call may be sent again because nothing read it: once after REFUSED_STREAM, and on
 * another connection when the one it was on failed before its peer ever spoke HTTP/2.
 */
const MAX_ATTEMPTS = 3;

const STATUS_DETAILS = "grpc-status-details-bin";
const USER_AGENT = "grpc-node-railgate/1";

/** Response header keys that are the transport's, not the call's (as grpc-js drops them). */
const HEADER_SKIP = new Set(["grpc-encoding", "grpc-accept-encoding"]);
const TRAILER_SKIP = new Set(["grpc-status", "grpc-message"]);

/** grpc-timeout: at most 8 digits, in the finest unit that fits (as grpc-js writes it). */
function timeoutHeader(ms: number): string {
  const n = Math.max(0, Math.ceil(ms));
  if (n < 1e8) return `${n}m`;
  if (n < 1e11) return `${Math.ceil(n / 1000)}S`;
  return `${Math.min(99_999_999, Math.ceil(n / 3_600_000))}H`;
}

/** Connect headers from HTTP/2 ones ("-bin" values stay base64, as Connect keeps them). */
export function headersOf(h2: IncomingHttpHeaders, skip: Set<string>): Headers {
  const out = new Headers();
  for (const key in h2) {
    if (key.charCodeAt(0) === 58 /* ":" */ || skip.has(key)) continue;
    const v = h2[key];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const e of v) out.append(key, e);
    else out.append(key, v);
  }
  return out;
}

/** A failed HTTP response without a gRPC status, as grpc-js maps it. */
function codeOfHttpStatus(status: number): Code {
  switch (status) {
    case 400:
      return Code.Internal;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}

function grpcMessage(raw: string | string[] | undefined): string {
  const s = Array.isArray(raw) ? raw.join(",") : (raw ?? "");
  if (!s.includes("%")) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/**
 * The end of a call from its trailers: typed details (an error's reason, a content
 * filter's error metadata) travel in grpc-status-details-bin, read by Connect's own
 * parser; otherwise grpc-status and the percent-encoded grpc-message.
 */
function statusOf(
  trailers: IncomingHttpHeaders,
  httpStatus: number | undefined,
): { error: ConnectError | undefined; trailer: Headers } {
  const trailer = headersOf(trailers, TRAILER_SKIP);
  const status = trailers["grpc-status"];
  if (status === "0") return { error: undefined, trailer };
  if (status === undefined) {
    const error =
      httpStatus !== undefined && httpStatus !== 200
        ? new ConnectError(`Received HTTP status code ${httpStatus}`, codeOfHttpStatus(httpStatus))
        : new ConnectError("No status received", Code.Unknown);
    return { error, trailer };
  }
  if (trailer.has(STATUS_DETAILS)) {
    const detailed = findTrailerError(trailer);
    if (detailed) return { error: detailed, trailer };
  }
  const n = Number(status);
  const code = Number.isInteger(n) && n in Code ? (n as Code) : Code.Unknown;
  return { error: new ConnectError(grpcMessage(trailers["grpc-message"]), code, trailer), trailer };
}

/**
 * One gRPC call (one request message; any number of response messages) on a
 * node:http2 stream of its target's shared connection: what a grpc-js call did
 * for the gateway, without its channel, filter and call layers. The request
 * goes out as one DATA write that ends the stream; response frames are cut
 * from the DATA chunks as they come (a frame may span chunks, a chunk may hold
 * several) with no copy unless one spans. A stream the peer refused before
 * answering (REFUSED_STREAM on a connection it is closing) goes once more on a
 * fresh connection, as grpc-js's transparent retry did; so does a call whose connection failed
 * before its peer sent its SETTINGS (nobody read the call). A call that passes its deadline, or
 * is given up before any answer, has its connection pinged (Http2Connection.probe): a peer
 * that froze loses the connection, and the calls on it end Unavailable.
 */
export class Http2GrpcCall {
  private connection: Http2Connection | undefined;
  private stream: ClientHttp2Stream | undefined;
  private done = false;
  private attempts = 0;
  private answered = false;
  private httpStatus: number | undefined;
  private trailers: IncomingHttpHeaders | undefined;
  private streamError: Error | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** Bytes of a frame that spans DATA chunks, and the frame's whole size once known. */
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private frameBytes = 0;
  private paused = false;

  constructor(
    private readonly target: Http2Target,
    private readonly options: CallOptions,
    private readonly listener: CallListener,
  ) {}

  start(): void {
    const { signal, timeoutMs, headers } = this.options;
    if (signal.aborted) {
      this.end(ConnectError.from(signal.reason, Code.Canceled), new Headers());
      return;
    }
    signal.addEventListener("abort", this.onAbort);
    headers["content-type"] = "application/grpc";
    headers.te = "trailers";
    headers["user-agent"] = USER_AGENT;
    headers[":method"] = "POST";
    if (timeoutMs !== undefined) {
      headers["grpc-timeout"] = timeoutHeader(timeoutMs);
      this.timer = setTimeout(
        () => this.cancel(new ConnectError("Deadline exceeded", Code.DeadlineExceeded)),
        timeoutMs,
      );
    }
    if (this.target.resolved) this.open();
    else this.target.whenResolved(() => this.open());
  }

  /** Holds response messages back (HTTP/2 flow control then holds the peer back). */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.stream?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.stream?.resume();
  }

  /** Ends the call with `error` and resets its stream (RST_STREAM CANCEL: the handler is cancelled). */
  cancel(error: ConnectError): void {
    if (this.done) return;
    // A peer that has not answered in time may be frozen: ask the connection (one ping).
    if (!this.answered || error.code === Code.DeadlineExceeded) this.connection?.probe();
    const stream = this.stream;
    if (stream && !stream.destroyed) stream.close(constants.NGHTTP2_CANCEL);
    this.end(error, new Headers());
  }

  private readonly onAbort = () => {
    this.cancel(ConnectError.from(this.options.signal.reason, Code.Canceled));
  };

  private readonly open = (): void => {
    if (this.done) return;
    this.attempts++;
    let connection: Http2Connection | undefined;
    let stream: ClientHttp2Stream;
    try {
      connection = this.target.connection(this.options.pin);
      if (connection === undefined) {
        const cause = this.target.lastError?.message ?? "no connection";
        this.end(
          new ConnectError(`No connection to the service: ${cause}`, Code.Unavailable),
          new Headers(),
        );
        return;
      }
      stream = connection.session.request(this.options.headers);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // A header HTTP/2 does not allow (the connection is fine).
      if (connection?.usable && !connection.session.closed && !connection.session.destroyed) {
        this.end(new ConnectError(message, Code.Internal), new Headers());
        return;
      }
      // A connection that went away between its GOAWAY and this call: once more on a fresh one.
      if (connection && this.attempts < MAX_ATTEMPTS) {
        this.target.forget(connection);
        this.open();
        return;
      }
      this.end(new ConnectError(message, Code.Unavailable), new Headers());
      return;
    }
    this.connection = connection;
    this.stream = stream;
    connection.started();
    stream.on("response", this.onResponse);
    stream.on("trailers", this.onTrailers);
    stream.on("data", this.onData);
    stream.on("end", this.onEnd);
    stream.on("error", this.onError);
    stream.on("close", this.onClose);
    if (this.paused) stream.pause();
    stream.end(this.options.body);
  };

  private readonly onResponse = (
    headers: IncomingHttpHeaders & IncomingHttpStatusHeader,
    flags: number,
  ) => {
    this.answered = true;
    this.httpStatus = headers[":status"];
    // Trailers-only: an error (or an empty answer) before any message.
    if (flags & constants.NGHTTP2_FLAG_END_STREAM && headers["grpc-status"] !== undefined) {
      this.trailers = headers;
      return;
    }
    if (!this.done) this.listener.onHeader(headersOf(headers, HEADER_SKIP));
  };

  private readonly onTrailers = (headers: IncomingHttpHeaders) => {
    this.trailers = headers;
  };

  private readonly onError = (err: Error) => {
    this.streamError = err;
  };

  /** Every DATA chunk has been read: the trailers (or their absence) end the call. */
  private readonly onEnd = () => {
    // Without trailers the stream's close says why it ended (a dropped connection, a reset).
    if (this.done || this.trailers === undefined) return;
    if (this.partsBytes > 0) {
      this.cancel(new ConnectError("protocol error: incomplete message", Code.Internal));
      return;
    }
    const { error, trailer } = statusOf(this.trailers, this.httpStatus);
    this.end(error, trailer);
  };

  private readonly onClose = () => {
    const connection = this.connection;
    this.connection = undefined;
    connection?.ended();
    if (this.done) return;
    const stream = this.stream as ClientHttp2Stream;
    if (this.trailers && this.partsBytes === 0) {
      const { error, trailer } = statusOf(this.trailers, this.httpStatus);
      this.end(error, trailer);
      return;
    }
    const rst = stream.rstCode;
    if (!this.answered && this.attempts < MAX_ATTEMPTS) {
      if (rst === constants.NGHTTP2_REFUSED_STREAM) {
        // Refused before the peer read anything: nothing was processed.
        if (connection) this.target.forget(connection);
        this.open();
        return;
      }
      if (connection && !connection.ready) {
        // The peer never spoke HTTP/2 on that connection (a frozen process behind a balancer,
        // a dial that failed): nothing read the call. The pool saw the failure already.
        this.open();
        return;
      }
    }
    this.end(this.closedWithout(rst, connection), new Headers());
  };

  /** Why a stream closed with no gRPC status, as grpc-js reports it. */
  private closedWithout(rst: number | undefined, connection: Http2Connection | undefined) {
    const session = connection?.session;
    const dropped = connection?.error !== undefined || session === undefined || session.destroyed;
    switch (rst) {
      case constants.NGHTTP2_REFUSED_STREAM:
        return new ConnectError("Stream refused by server", Code.Unavailable);
      case constants.NGHTTP2_ENHANCE_YOUR_CALM:
        return new ConnectError(
          "Bandwidth exhausted or memory limit exceeded",
          Code.ResourceExhausted,
        );
      case constants.NGHTTP2_INADEQUATE_SECURITY:
        return new ConnectError("Protocol not secure enough", Code.PermissionDenied);
      case constants.NGHTTP2_CANCEL:
        // A connection destroyed under the call (a ping unanswered, a reset) says why.
        return dropped
          ? this.unavailable(connection)
          : new ConnectError("Call cancelled", Code.Canceled);
      case constants.NGHTTP2_NO_ERROR:
        if (this.httpStatus !== undefined && this.httpStatus !== 200) {
          return new ConnectError(
            `Received HTTP status code ${this.httpStatus}`,
            codeOfHttpStatus(this.httpStatus),
          );
        }
        if (dropped) return this.unavailable(connection);
        return new ConnectError("Call ended without gRPC status", Code.Internal);
      default:
        // The connection failed or was reset under the call (a killed service).
        if (dropped || rst === constants.NGHTTP2_INTERNAL_ERROR) {
          return this.unavailable(connection);
        }
        return new ConnectError(`Received RST_STREAM with code ${rst}`, Code.Internal);
    }
  }

  private unavailable(connection: Http2Connection | undefined): ConnectError {
    const cause = connection?.error ?? this.streamError;
    return new ConnectError(
      cause ? `Connection dropped: ${cause.message}` : "Connection dropped",
      Code.Unavailable,
    );
  }

  private readonly onData = (chunk: Buffer) => {
    if (this.done) return;
    if (this.partsBytes === 0) {
      this.frames(chunk);
      return;
    }
    this.parts.push(chunk);
    this.partsBytes += chunk.byteLength;
    if (this.frameBytes === 0 && this.partsBytes >= 5) {
      const head = this.parts.length === 1 ? chunk : Buffer.concat(this.parts, this.partsBytes);
      if (!this.checkPrefix(head, 0)) return;
      this.frameBytes = 5 + head.readUInt32BE(1);
    }
    if (this.frameBytes === 0 || this.partsBytes < this.frameBytes) return;
    const whole = Buffer.concat(this.parts, this.partsBytes);
    this.parts = [];
    this.partsBytes = 0;
    this.frameBytes = 0;
    this.frames(whole);
  };

  /** Hands on every whole frame of `buf`; keeps a partial one for the next chunk. */
  private frames(buf: Buffer): void {
    let at = 0;
    const n = buf.byteLength;
    while (n - at >= 5) {
      if (!this.checkPrefix(buf, at)) return;
      const len = buf.readUInt32BE(at + 1);
      if (n - at - 5 < len) break;
      this.listener.onMessage(buf.subarray(at + 5, at + 5 + len));
      if (this.done) return;
      at += 5 + len;
    }
    if (at === n) return;
    const rest = buf.subarray(at);
    this.parts.push(rest);
    this.partsBytes = rest.byteLength;
    if (rest.byteLength >= 5) this.frameBytes = 5 + rest.readUInt32BE(1);
  }

  /** A frame's prefix: no compression (none was offered), within the message size limit. */
  private checkPrefix(buf: Buffer, at: number): boolean {
    if ((buf[at] as number) & 1) {
      this.cancel(new ConnectError("protocol error: received compressed message", Code.Internal));
      return false;
    }
    const len = buf.readUInt32BE(at + 1);
    if (len > this.options.maxMessageBytes) {
      this.cancel(
        new ConnectError(
          `Received message larger than max (${len} vs. ${this.options.maxMessageBytes})`,
          Code.ResourceExhausted,
        ),
      );
      return false;
    }
    return true;
  }

  private end(error: ConnectError | undefined, trailer: Headers): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.timer);
    this.options.signal.removeEventListener("abort", this.onAbort);
    this.parts = [];
    this.partsBytes = 0;
    this.listener.onEnd(error, trailer);
  }
}
