import type { IncomingHttpHeaders, OutgoingHttpHeaders, ServerHttp2Stream } from "node:http2";
import { create, type DescMessage, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type StreamRequest,
  type StreamResponse,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { parseTimeout, setTrailerStatus } from "@connectrpc/connect/protocol-grpc";
import { directBytesEncoder } from "./grpc-direct-encoding.js";
import { STREAM_WINDOW_BYTES } from "./http2-grpc-session.js";
import type { ServiceRegistration } from "./in-process-transport.js";
import { chainInterceptors } from "./interceptor-chain.js";

/**
 * What a server stream may hold unsent before its handler is asked for no more messages: the
 * stream window the gateway's client grants, so a caller that reads holds the handler back
 * only once its window is spent. A caller that stops reading leaves at most this much here,
 * beside what its window let through.
 */
const STREAM_BUFFER_BYTES = STREAM_WINDOW_BYTES;

type MethodSpec = ReturnType<typeof createServiceImplSpec>["methods"][string];

interface Route {
  spec: MethodSpec;
  /** The message's bytes field alone, when that is all it holds: its bytes go out uncopied. */
  directBytes: ReturnType<typeof directBytesEncoder>;
}

/**
 * Why a call's handler signal aborts. Shared instances: `abort()` without a
 * reason builds a DOMException (with its stack) per call, and Connect's
 * handler aborted every call's signal so when it ended.
 */
const CALL_ENDED = new ConnectError("the call ended", Code.Canceled);
const CANCELLED = new ConnectError("cancelled by the client", Code.Canceled);
const TIMED_OUT = new ConnectError("the operation timed out", Code.DeadlineExceeded);
const INTERNAL = "internal error";
const CONTENT_TYPE = "application/grpc+proto";
/** grpc-timeout's own limit (8 digits of hours), as Connect's handler allows. */
const MAX_TIMEOUT_MS = Number.MAX_SAFE_INTEGER;

const noDeadline = (): undefined => undefined;
const ignore = () => {};

export interface DirectHandlerOptions {
  services: ServiceRegistration[];
  /** The same interceptors Connect's handler runs, first listed outermost. */
  interceptors: Interceptor[];
  /** The largest request message read; a larger one fails with ResourceExhausted. */
  readMaxBytes: number;
  /** Context values of a call, from its HTTP/2 stream (the mTLS peer). */
  contextValues: (stream: ServerHttp2Stream) => ContextValues;
}

/**
 * Serves the unary and server-streaming methods of Connect `ServiceImpl`s
 * over gRPC straight from node:http2 streams: the request envelope is read
 * and decoded, the handler runs through the same interceptors (metrics,
 * tracing, error hiding, authentication) with a handler context built once,
 * and each response message is framed and written as it comes. What this
 * leaves out of Connect's server per call: the compat request and response
 * objects, the chain of async iterables per message (envelope split, parse,
 * serialize, join), a linked AbortController and a DOMException at the end,
 * and two copies of every audio message (protobuf's writer, then the
 * envelope): an audio message's bytes are written as they were received,
 * behind an 8-byte frame prefix (see grpc-direct-encoding.ts).
 *
 * Anything else (another content type: Connect or gRPC-web; client or bidi
 * streams; unknown paths) is not handled here: `handle` returns false and the
 * caller passes the stream on to Connect's adapter.
 */
export function createDirectHandler(options: DirectHandlerOptions) {
  const routes = new Map<string, Route>();
  for (const { service, impl } of options.services) {
    const spec = createServiceImplSpec(service, impl);
    for (const m of Object.values(spec.methods)) {
      if (m.kind !== "unary" && m.kind !== "server_streaming") continue;
      routes.set(`/${service.typeName}/${m.method.name}`, {
        spec: m,
        directBytes: directBytesEncoder(m.method.output),
      });
    }
  }
  const { interceptors, readMaxBytes } = options;

  /** Returns false when the stream is not a gRPC call this handler serves. */
  return function handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): boolean {
    const path = headers[":path"];
    const route = path === undefined ? undefined : routes.get(path);
    if (!route || headers[":method"] !== "POST") return false;
    const type = headers["content-type"];
    if (type !== "application/grpc" && type !== CONTENT_TYPE) return false;
    void serve(stream, headers, path as string, route);
    return true;
  };

  async function serve(
    stream: ServerHttp2Stream,
    headers: IncomingHttpHeaders,
    path: string,
    route: Route,
  ): Promise<void> {
    const { spec } = route;
    const method = spec.method;
    const call = new Call(stream);
    const abort = new AbortController();
    let finished = false;
    // A caller that resets the stream (or a connection that goes away) cancels the call.
    stream.once("close", () => {
      if (!finished) abort.abort(CANCELLED);
    });
    const timeout = parseTimeout(headerValue(headers["grpc-timeout"]), MAX_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    if (timeout.timeoutMs !== undefined) {
      timer = setTimeout(() => abort.abort(TIMED_OUT), timeout.timeoutMs);
    }
    const deadline = timeout.timeoutMs === undefined ? undefined : Date.now() + timeout.timeoutMs;
    const context: HandlerContext = {
      service: method.parent,
      method,
      protocolName: "grpc",
      requestMethod: "POST",
      url: `${stream.session?.encrypted ? "https" : "http"}://${headers[":authority"] ?? ""}${path}`,
      signal: abort.signal,
      timeoutMs: deadline === undefined ? noDeadline : () => deadline - Date.now(),
      requestHeader: requestHeaders(headers),
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      values: options.contextValues(stream),
    };
    const aborted = untilAborted(abort.signal);
    let output: AsyncIterator<unknown> | undefined;
    try {
      if (timeout.error) throw timeout.error;
      const encoding = headerValue(headers["grpc-encoding"]);
      if (encoding !== null && encoding !== "identity") {
        throw new ConnectError(`unsupported grpc-encoding "${encoding}"`, Code.Unimplemented);
      }
      const body = await Promise.race([readBody(stream, readMaxBytes), aborted.promise]);
      const input = decode(method.input, body, readMaxBytes);
      if (spec.kind === "unary") {
        const res = await Promise.race([invokeUnary(spec, context, input), aborted.promise]);
        if (!call.write(route, res.message, res.header)) {
          await Promise.race([call.drained(), aborted.promise]);
        }
        call.end(res.trailer, undefined, res.header);
        return;
      }
      const res = await Promise.race([invokeStream(spec, context, input), aborted.promise]);
      output = res.message[Symbol.asyncIterator]();
      for (;;) {
        const next = await Promise.race([output.next(), aborted.promise]);
        if (next.done) break;
        // As Connect's server: the next message is asked for once this one is
        // written, or when the stream drains if HTTP/2 flow control holds it back.
        if (!call.write(route, next.value, res.header)) {
          await Promise.race([call.drained(), aborted.promise]);
        }
      }
      call.end(res.trailer, undefined, res.header);
    } catch (err) {
      call.end(context.responseTrailer, failure(err, abort.signal), context.responseHeader);
    } finally {
      finished = true;
      clearTimeout(timer);
      aborted.done();
      // Whatever still listens on the handler's signal (an upstream, an engine) stops now.
      if (!abort.signal.aborted) abort.abort(CALL_ENDED);
      // Ends the implementation's generator (its finally blocks settle and record).
      await output?.return?.(undefined).catch(ignore);
    }
  }

  function invokeUnary(
    spec: MethodSpec,
    context: HandlerContext,
    input: unknown,
  ): Promise<UnaryResponse<DescMessage, DescMessage>> {
    const final = async (
      req: UnaryRequest<DescMessage, DescMessage>,
    ): Promise<UnaryResponse<DescMessage, DescMessage>> => {
      const impl = spec.impl as (m: unknown, c: HandlerContext) => unknown;
      const message = await impl(req.message, handlerContext(context, req));
      return {
        stream: false,
        service: spec.method.parent,
        method: spec.method as never,
        header: context.responseHeader,
        trailer: context.responseTrailer,
        message: normalize(spec.method.output, message) as never,
      };
    };
    return chainInterceptors(
      final,
      interceptors,
    )({
      ...requestOf(spec, context),
      stream: false,
      method: spec.method as never,
      message: input as never,
    });
  }

  function invokeStream(
    spec: MethodSpec,
    context: HandlerContext,
    input: unknown,
  ): Promise<StreamResponse<DescMessage, DescMessage>> {
    const final = async (
      req: StreamRequest<DescMessage, DescMessage>,
    ): Promise<StreamResponse<DescMessage, DescMessage>> => {
      const impl = spec.impl as (m: unknown, c: HandlerContext) => AsyncIterable<unknown>;
      const request = req.message === (requestOnce as unknown) ? input : await single(req.message);
      return {
        stream: true,
        service: spec.method.parent,
        method: spec.method as never,
        header: context.responseHeader,
        trailer: context.responseTrailer,
        message: impl(request, handlerContext(context, req)) as never,
      };
    };
    // An interceptor that reads the request (authentication, to log a refusal) reads it here.
    const requestOnce = oneMessage(input);
    return chainInterceptors(
      final,
      interceptors,
    )({
      ...requestOf(spec, context),
      stream: true,
      method: spec.method as never,
      message: requestOnce as never,
    });
  }
}

/** What an interceptor sees of the call, as Connect's handler builds it. */
function requestOf(spec: MethodSpec, context: HandlerContext) {
  return {
    requestMethod: context.requestMethod,
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    service: spec.method.parent,
    contextValues: context.values,
  };
}

/** The handler's context, with whatever the interceptors replaced in the request. */
function handlerContext(
  context: HandlerContext,
  req: { header: Headers; signal: AbortSignal; contextValues: ContextValues },
): HandlerContext {
  if (
    req.header === context.requestHeader &&
    req.signal === context.signal &&
    req.contextValues === context.values
  ) {
    return context;
  }
  return { ...context, requestHeader: req.header, signal: req.signal, values: req.contextValues };
}

function normalize(desc: DescMessage, message: unknown): unknown {
  return isMessage(message, desc) ? message : create(desc, message as never);
}

/** The single request message of a server-streaming call, as an async iterable. */
function oneMessage<T>(message: T): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      let done = false;
      return {
        next: async () => {
          if (done) return { done: true, value: undefined };
          done = true;
          return { done: false, value: message };
        },
      };
    },
  };
}

async function single(messages: AsyncIterable<unknown>): Promise<unknown> {
  for await (const m of messages) return m;
  throw new ConnectError("protocol error: missing input message", Code.Unimplemented);
}

function headerValue(v: string | string[] | undefined): string | null {
  return v === undefined ? null : Array.isArray(v) ? v.join(", ") : v;
}

/** The call's metadata as Connect's Headers, without HTTP/2 pseudo-headers. */
function requestHeaders(headers: IncomingHttpHeaders): Headers {
  const h = new Headers();
  for (const key in headers) {
    if (key.charCodeAt(0) === 58 /* ":" */) continue;
    const v = headers[key];
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const e of v) h.append(key, e);
    else h.append(key, v);
  }
  return h;
}

/** The request body: one gRPC envelope, read whole (unary and server-streaming calls only). */
function readBody(stream: ServerHttp2Stream, readMaxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      chunks.push(chunk);
      if (size <= readMaxBytes + 5) return;
      // Refused before it is all read: what is left is not kept.
      stream.off("data", onData);
      stream.resume();
      chunks.length = 0;
      reject(
        new ConnectError(
          `message size is larger than configured readMaxBytes ${readMaxBytes}`,
          Code.ResourceExhausted,
        ),
      );
    };
    stream.on("data", onData);
    stream.once("end", () =>
      resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)),
    );
    stream.once("error", reject);
  });
}

function decodeEnvelope(body: Buffer, readMaxBytes: number): Buffer {
  if (body.byteLength < 5) {
    throw new ConnectError("protocol error: missing input message", Code.Unimplemented);
  }
  if ((body[0] as number) & 1) {
    throw new ConnectError(
      "protocol error: received compressed message without grpc-encoding",
      Code.Internal,
    );
  }
  const length = body.readUInt32BE(1);
  if (length > readMaxBytes) {
    throw new ConnectError(
      `message size ${length} is larger than configured readMaxBytes ${readMaxBytes}`,
      Code.ResourceExhausted,
    );
  }
  if (body.byteLength !== 5 + length) {
    throw new ConnectError(
      body.byteLength < 5 + length
        ? "protocol error: promised more bytes than received"
        : "protocol error: received extra input message",
      Code.Unimplemented,
    );
  }
  return body.subarray(5);
}

/** The final status of a failed call, as Connect's handler reports it. */
function failure(err: unknown, signal: AbortSignal): ConnectError {
  if (err instanceof ConnectError) return err;
  // The call's own signal aborting is the cancellation or the deadline arriving.
  if (signal.aborted && err === signal.reason) return ConnectError.from(err);
  return new ConnectError(INTERNAL, Code.Internal, undefined, undefined, err);
}

/** Rejects when the signal aborts: a handler that ignores its signal still ends the call. */
function untilAborted(signal: AbortSignal): { promise: Promise<never>; done(): void } {
  let onAbort = ignore;
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  promise.catch(ignore);
  return { promise, done: () => signal.removeEventListener("abort", onAbort) };
}

/** The response side of one call on its HTTP/2 stream. */
class Call {
  private headersSent = false;
  private trailers: OutgoingHttpHeaders | undefined;

  constructor(private readonly stream: ServerHttp2Stream) {
    // A stream error (a reset, a header too large for the peer) ends the call through its
    // "close" event; without a listener it would be an uncaught exception.
    stream.on("error", ignore);
    stream.once("wantTrailers", () => {
      if (!stream.destroyed) stream.sendTrailers(this.trailers ?? { "grpc-status": "0" });
    });
  }

  private respond(header: Headers): boolean {
    if (this.headersSent) return true;
    this.headersSent = true;
    if (this.stream.destroyed) return false;
    const out: OutgoingHttpHeaders = { ":status": 200 };
    header.forEach((value, key) => {
      out[key] = value;
    });
    out["content-type"] = CONTENT_TYPE;
    try {
      this.stream.respond(out, { waitForTrailers: true });
    } catch (err) {
      this.stream.destroy(err as Error);
      return false;
    }
    return true;
  }

  /**
   * Writes one message; false when HTTP/2 flow control holds the stream back (await drained):
   * when STREAM_BUFFER_BYTES are still waiting in it. The stream's own answer says false past
   * its 16 KiB high-water mark, the second of a clip's 9.6 kB messages: a wait for "drain" (a
   * turn of the event loop, and the next messages in separate socket writes) every second
   * message, though the caller had granted a 256 KiB window (platform/rpc/http2-grpc-session.ts).
   */
  write(route: Route, message: unknown, header: Headers): boolean {
    if (!this.respond(header) || this.stream.destroyed) return true;
    const stream = this.stream;
    const raw = route.directBytes(message);
    stream.cork();
    let ok: boolean;
    if (raw) {
      stream.write(raw.prefix);
      ok = stream.write(raw.bytes);
    } else {
      const body = toBinary(
        route.spec.method.output,
        normalize(route.spec.method.output, message) as never,
      );
      const prefix = Buffer.allocUnsafe(5);
      prefix[0] = 0;
      prefix.writeUInt32BE(body.byteLength, 1);
      stream.write(prefix);
      ok = stream.write(body);
    }
    stream.uncork();
    return ok || stream.writableLength < STREAM_BUFFER_BYTES;
  }

  drained(): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.stream.off("drain", done);
        this.stream.off("close", done);
        resolve();
      };
      this.stream.on("drain", done);
      this.stream.on("close", done);
    });
  }

  /** Sends the trailers (the status, and the handler's trailers), headers first if none went. */
  end(trailer: Headers, error: ConnectError | undefined, header: Headers): void {
    if (this.trailers) return;
    const status = setTrailerStatus(new Headers(trailer), error);
    const out: OutgoingHttpHeaders = {};
    status.forEach((value, key) => {
      out[key] = value;
    });
    this.trailers = out;
    if (this.stream.destroyed) return;
    if (!this.respond(header)) return;
    this.stream.end();
  }
}

function decode(desc: DescMessage, body: Buffer, readMaxBytes: number): unknown {
  const bytes = decodeEnvelope(body, readMaxBytes);
  try {
    return fromBinary(desc, bytes);
  } catch (err) {
    throw new ConnectError(
      `parse binary: ${err instanceof Error ? err.message : String(err)}`,
      Code.Internal,
    );
  }
}
