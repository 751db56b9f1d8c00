import { create, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createHandlerContext,
  createServiceImplSpec,
  type HandlerContext,
  type Interceptor,
  type ServiceImpl,
  type StreamRequest,
  type StreamResponse,
  type Transport,
  type UnaryRequest,
  type UnaryResponse,
} from "@connectrpc/connect";
import { deepFreeze } from "../deep-freeze.js";
import { mapMessages, streamRequest, unaryRequest } from "./client-requests.js";
import { chainInterceptors } from "./interceptor-chain.js";

type ImplSpec = ReturnType<typeof createServiceImplSpec>;
type MethodSpec = ImplSpec["methods"][string];

/** A service and its implementation, as registered on a gRPC server (see `served`). */
export interface ServiceRegistration {
  service: DescService;
  impl: Partial<ServiceImpl<DescService>>;
}

/** Pairs a service with its implementation, type-checked against each other. */
export function served<T extends DescService>(
  service: T,
  impl: Partial<ServiceImpl<T>>,
): ServiceRegistration {
  return { service, impl: impl as Partial<ServiceImpl<DescService>> };
}

export interface InProcessTransportOptions {
  services: ServiceRegistration[];
  /** The server's interceptors (error hiding, authentication), exactly as over the wire. */
  serverInterceptors: Interceptor[];
  /** The caller's interceptors (e.g. its service credential), exactly as over the wire. */
  clientInterceptors?: Interceptor[];
  /**
   * Freeze every message that crosses, in both directions. Messages cross by
   * reference, so a side that mutated what it received would corrupt the
   * other's state; frozen messages make such a write throw (tests turn it on).
   */
  freezeMessages?: boolean;
}

const noDeadline = (): undefined => undefined;
const nothing = (): void => {};

/**
 * Why a stream's handler signal aborts once the call is over. One shared
 * reason: `abort()` without one builds a DOMException (with its stack) per call.
 */
const CALL_ENDED = new ConnectError("the call ended", Code.Canceled);

/** Rejects when the signal aborts: a handler that ignores its signal still ends the call. */
function untilAborted(signal: AbortSignal): { promise: Promise<never>; done(): void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(ConnectError.from(signal.reason, Code.Canceled));
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  promise.catch(() => {});
  return { promise, done: () => signal.removeEventListener("abort", onAbort) };
}

/**
 * A Connect `Transport` that calls the services' implementations in this
 * process: no HTTP/2, no serialization, messages by reference. Everything else
 * is as over the wire: the same server interceptors (error hiding,
 * authentication), request headers, response headers and trailers, deadlines
 * (DeadlineExceeded) and cancellation (a caller that goes away aborts the
 * handler's signal, which stops the engine and the upstream).
 */
export function createInProcessTransport(options: InProcessTransportOptions): Transport {
  const methods = new Map<DescMethod, MethodSpec>();
  for (const { service, impl } of options.services) {
    const spec = createServiceImplSpec(service, impl);
    for (const m of Object.values(spec.methods)) methods.set(m.method, m);
  }
  const freeze: Freeze = options.freezeMessages ? <T>(m: T): T => deepFreeze(m) : unfrozen;
  const clientInterceptors = options.clientInterceptors ?? [];

  function specOf(method: DescMethod): MethodSpec {
    const spec = methods.get(method);
    if (!spec) {
      throw new ConnectError(
        `${method.parent.typeName}.${method.name} is not served here`,
        Code.Unimplemented,
      );
    }
    return spec;
  }

  /** The handler's side of a call, from the request as the client's interceptors left it. */
  function contextFor(
    method: DescMethod,
    req: { url: string; signal: AbortSignal; header: Headers; contextValues: ContextValues },
    timeoutMs: number | undefined,
  ) {
    return createHandlerContext({
      service: method.parent,
      method,
      protocolName: "in-process",
      requestMethod: "POST",
      url: req.url,
      timeoutMs,
      requestSignal: req.signal,
      requestHeader: req.header,
      contextValues: req.contextValues,
    });
  }

  /**
   * A call's handler context without Connect's per-call machinery when there is no deadline:
   * the handler runs on the caller's own signal (no linked AbortController with listeners to
   * remove, no abort with a DOMException when the call ends), so the one AbortController of a
   * gateway request reaches the handler and everything under it (the upstream's request).
   * The request headers are the ones the client's interceptors produced. A caller that gives
   * up on a stream aborts its signal, as over the wire; a stream that ends normally leaves it
   * alone (the handler's generator has finished, or is returned, so its finally blocks run).
   * With a deadline, Connect's own context (a timer and a linked signal), ended when the call is.
   */
  function callContext(
    method: DescMethod,
    req: { url: string; signal: AbortSignal; header: Headers; contextValues: ContextValues },
    timeoutMs: number | undefined,
  ): { context: HandlerContext; end(): void } {
    if (timeoutMs !== undefined) {
      const context = contextFor(method, req, timeoutMs);
      return { context, end: () => context.abort(CALL_ENDED) };
    }
    const context: HandlerContext = {
      service: method.parent,
      method,
      protocolName: "in-process",
      requestMethod: "POST",
      url: req.url,
      signal: req.signal,
      timeoutMs: noDeadline,
      requestHeader: req.header,
      responseHeader: new Headers(),
      responseTrailer: new Headers(),
      values: req.contextValues,
    };
    return { context, end: nothing };
  }

  /** What a unary and a streaming request share, as the wire transports build it. */

  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: Parameters<Transport["unary"]>[0],
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: unknown,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const spec = specOf(method);
      const final = async (req: UnaryRequest<I, O>): Promise<UnaryResponse<I, O>> => {
        const { context, end } = callContext(method, req, timeoutMs);
        const aborted = untilAborted(context.signal);
        try {
          const message = await Promise.race([
            invokeUnary(spec, context, freeze(req.message), options.serverInterceptors),
            aborted.promise,
          ]);
          return {
            stream: false,
            service: method.parent,
            method: method as never,
            header: context.responseHeader,
            trailer: context.responseTrailer,
            message: freeze(message) as never,
          };
        } finally {
          aborted.done();
          end();
        }
      };
      return chainInterceptors(
        final,
        clientInterceptors,
      )(unaryRequest("", method, signal, header, input, contextValues));
    },

    async stream<I extends DescMessage, O extends DescMessage>(
      method: Parameters<Transport["stream"]>[0],
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0],
      input: AsyncIterable<unknown>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      const spec = specOf(method);
      const final = async (req: StreamRequest<I, O>): Promise<StreamResponse<I, O>> => {
        const { context, end } = callContext(method, req, timeoutMs);
        // The server's interceptors and the handler, called directly: what Connect's
        // transformInvokeImplementation does, without its async-generator wrappers (each one
        // a few promise turns per message) and without re-creating every message.
        const invoke = async (sreq: StreamRequest<I, O>): Promise<StreamResponse<I, O>> => {
          const handlerContext = handlerContextOf(context, sreq);
          const request = await onlyMessage(sreq.message, spec.kind);
          return {
            stream: true,
            service: method.parent,
            method: method as never,
            header: context.responseHeader,
            trailer: context.responseTrailer,
            message: invokeHandler(spec, request, handlerContext) as never,
          };
        };
        let res: StreamResponse<I, O>;
        try {
          res = await chainInterceptors(
            invoke,
            options.serverInterceptors,
          )({
            stream: true,
            service: method.parent,
            method: method as never,
            requestMethod: "POST",
            url: req.url,
            signal: context.signal,
            header: context.requestHeader,
            contextValues: context.values,
            message: frozenMessages(req.message, freeze) as never,
          });
        } catch (err) {
          end();
          throw err;
        }
        return {
          ...res,
          message: new CallResponses(
            res.message[Symbol.asyncIterator](),
            context.signal,
            end,
            method.output,
            freeze,
          ) as never,
        };
      };
      return chainInterceptors(
        final,
        clientInterceptors,
      )(streamRequest("", method, signal, header, input, contextValues));
    },
  } as Transport;
}

/**
 * The handler's context: the call's own, unless the server's interceptors changed the
 * request's signal, headers or values (then those), as Connect builds it per layer.
 */
function handlerContextOf(
  context: HandlerContext,
  req: { signal: AbortSignal; header: Headers; contextValues: ContextValues },
): HandlerContext {
  return req.signal === context.signal &&
    req.header === context.requestHeader &&
    req.contextValues === context.values
    ? context
    : { ...context, signal: req.signal, requestHeader: req.header, values: req.contextValues };
}

/**
 * Runs a unary handler behind the server's interceptors: what Connect's
 * invokeUnaryImplementation does (the handler's context follows what the interceptors made of
 * the request; the answer is a full message of the output type; the response headers and
 * trailers are the context's), without rebuilding the context and the request per layer when
 * the interceptors left them as they were.
 */
async function invokeUnary(
  spec: MethodSpec,
  context: HandlerContext,
  input: unknown,
  interceptors: Interceptor[],
): Promise<unknown> {
  const method = spec.method as DescMethod;
  const impl = spec.impl as (req: unknown, ctx: HandlerContext) => unknown;
  const handle = async (req: UnaryRequest): Promise<UnaryResponse> => {
    const handlerContext = handlerContextOf(context, req);
    const output = await impl(req.message, handlerContext);
    return {
      stream: false,
      service: method.parent,
      method: method as never,
      header: context.responseHeader,
      trailer: context.responseTrailer,
      // A message as it is, anything else made a full message (create() returns a message).
      message: create(method.output, output as never),
    } as UnaryResponse;
  };
  const res = await chainInterceptors(
    handle,
    interceptors,
  )({
    stream: false,
    service: method.parent,
    method: method as never,
    requestMethod: "POST",
    url: context.url,
    signal: context.signal,
    header: context.requestHeader,
    contextValues: context.values,
    message: input as never,
  });
  copyHeaders(res.header, context.responseHeader);
  copyHeaders(res.trailer, context.responseTrailer);
  return res.message;
}

/** An interceptor's own response headers or trailers replace the context's (as Connect does). */
function copyHeaders(from: Headers, to: Headers): void {
  if (from === to) return;
  for (const key of [...to.keys()]) to.delete(key);
  from.forEach((value, key) => {
    to.set(key, value);
  });
}

type Freeze = <T>(m: T) => T;

/** The request messages as the handler sees them: frozen in tests. */
function frozenMessages(input: AsyncIterable<unknown>, freeze: Freeze): AsyncIterable<unknown> {
  return freeze === unfrozen ? input : mapMessages(input, freeze);
}

const unfrozen: Freeze = (m) => m;

/** The one request message of a server-streaming call (Connect's check, without its wrappers). */
async function onlyMessage(input: AsyncIterable<unknown>, kind: string): Promise<unknown> {
  const it = input[Symbol.asyncIterator]();
  const first = await it.next();
  if (first.done === true) {
    throw new ConnectError(
      `protocol error: missing input message for ${kind} method`,
      Code.Unimplemented,
    );
  }
  const second = await it.next();
  if (second.done !== true) {
    throw new ConnectError(
      `protocol error: received extra input message for ${kind} method`,
      Code.Unimplemented,
    );
  }
  return first.value;
}

/** Runs a streaming handler: its output as an iterator (a client stream's one answer, too). */
function invokeHandler(
  spec: MethodSpec,
  request: unknown,
  context: HandlerContext,
): AsyncIterable<unknown> {
  const impl = spec.impl as (req: unknown, ctx: HandlerContext) => unknown;
  if (spec.kind === "client_streaming") {
    const answer = Promise.resolve(impl(request, context));
    return {
      [Symbol.asyncIterator]() {
        let given = false;
        return {
          next: async () => {
            if (given) return { done: true, value: undefined };
            given = true;
            return { done: false, value: await answer };
          },
        };
      },
    };
  }
  return impl(request, context) as AsyncIterable<unknown>;
}

/**
 * The caller's side of a stream: each message from the handler (through the server's
 * interceptors) as a full message, frozen in tests. A plain iterator rather than an async
 * generator: one promise per message. When the call's signal aborts, a read in progress
 * rejects at once (Canceled, with the signal's own reason: no DOMException per stream end)
 * even if the handler ignores its signal, and the handler's generator is returned so its
 * finally blocks run; a caller that stops reading returns it too.
 */
class CallResponses implements AsyncIterableIterator<unknown> {
  private reject: ((err: unknown) => void) | undefined;
  private ended = false;
  private readonly onAbort = () => {
    const reject = this.reject;
    this.finish();
    reject?.(ConnectError.from(this.signal.reason, Code.Canceled));
  };

  constructor(
    private readonly output: AsyncIterator<unknown>,
    private readonly signal: AbortSignal,
    private readonly end: () => void,
    private readonly desc: DescMessage,
    private readonly freeze: Freeze,
  ) {
    signal.addEventListener("abort", this.onAbort, { once: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<unknown>> {
    if (this.signal.aborted) {
      if (!this.ended) this.finish();
      return Promise.reject(ConnectError.from(this.signal.reason, Code.Canceled));
    }
    if (this.ended) return Promise.resolve({ done: true, value: undefined });
    return new Promise((resolve, reject) => {
      this.reject = reject;
      this.output.next().then(
        (r) => {
          this.reject = undefined;
          if (r.done) {
            this.finish(false);
            resolve(r);
          } else {
            resolve({ done: false, value: this.freeze(create(this.desc, r.value as never)) });
          }
        },
        (err: unknown) => {
          this.reject = undefined;
          this.finish(false);
          reject(err);
        },
      );
    });
  }

  async return(value?: unknown): Promise<IteratorResult<unknown>> {
    if (!this.ended) {
      this.ended = true;
      this.signal.removeEventListener("abort", this.onAbort);
      try {
        await this.output.return?.(undefined);
      } finally {
        this.end();
      }
    }
    return { done: true, value };
  }

  /** The call is over: no more listening, and a handler still running is returned. */
  private finish(running = true): void {
    if (this.ended) return;
    this.ended = true;
    this.signal.removeEventListener("abort", this.onAbort);
    this.end();
    // Not awaited: a handler that ignores its signal must not hold the caller.
    if (running) this.output.return?.(undefined).catch(() => {});
  }
}
