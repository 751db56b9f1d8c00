import { create, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
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
import {
  invokeUnaryImplementation,
  transformInvokeImplementation,
} from "@connectrpc/connect/protocol";
import { deepFreeze } from "./deep-freeze.js";
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
  const freeze = options.freezeMessages ? <T>(m: T): T => deepFreeze(m) : <T>(m: T): T => m;
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
   * A unary call's handler context without Connect's per-call machinery when
   * there is no deadline: the handler listens on the caller's own signal (no
   * linked AbortController, no listeners to remove, no abort with its
   * DOMException when the call ends), and the request headers are the ones the
   * client's interceptors produced. A unary handler has returned by the time
   * the call ends, so aborting its signal then would tell it nothing (streams,
   * whose producers may still run, keep the linked signal and its abort).
   */
  function unaryContext(
    method: DescMethod,
    req: { url: string; signal: AbortSignal; header: Headers; contextValues: ContextValues },
    timeoutMs: number | undefined,
  ): { context: HandlerContext; end(): void } {
    if (timeoutMs !== undefined) {
      const context = contextFor(method, req, timeoutMs);
      return { context, end: () => context.abort() };
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
    return { context, end: () => {} };
  }

  /** What a unary and a streaming request share, as the wire transports build it. */
  function requestCommon(
    method: DescMethod,
    signal: AbortSignal | undefined,
    header: ConstructorParameters<typeof Headers>[0],
    contextValues: ContextValues | undefined,
  ) {
    return {
      service: method.parent,
      requestMethod: "POST",
      url: `/${method.parent.typeName}/${method.name}`,
      signal: signal ?? new AbortController().signal,
      header: new Headers(header),
      contextValues: contextValues ?? createContextValues(),
    };
  }

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
        const { context, end } = unaryContext(method, req, timeoutMs);
        const aborted = untilAborted(context.signal);
        try {
          const message = await Promise.race([
            invokeUnaryImplementation(
              spec as never,
              context,
              freeze(req.message),
              options.serverInterceptors,
            ),
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
      const request: UnaryRequest<I, O> = {
        ...requestCommon(method, signal, header, contextValues),
        stream: false,
        method: method as never,
        message: create(method.input, input as never) as never,
      };
      return chainInterceptors(final, clientInterceptors)(request);
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
        const context = contextFor(method, req, timeoutMs);
        const invoke = transformInvokeImplementation(
          spec as never,
          context,
          options.serverInterceptors,
        );
        async function* requests() {
          for await (const m of req.message) yield freeze(m);
        }
        async function* responses() {
          const aborted = untilAborted(context.signal);
          const output = invoke(requests() as never)[Symbol.asyncIterator]();
          try {
            for (;;) {
              const next = await Promise.race([output.next(), aborted.promise]);
              if (next.done) return;
              yield freeze(next.value) as never;
            }
          } finally {
            aborted.done();
            context.abort(CALL_ENDED);
            // Ends the implementation's generator (its finally blocks settle and record).
            await output.return?.(undefined);
          }
        }
        return {
          stream: true,
          service: method.parent,
          method: method as never,
          header: context.responseHeader,
          trailer: context.responseTrailer,
          message: responses(),
        };
      };
      async function* inputs() {
        for await (const m of input) yield create(method.input, m as never);
      }
      const request: StreamRequest<I, O> = {
        ...requestCommon(method, signal, header, contextValues),
        stream: true,
        method: method as never,
        message: inputs() as never,
      };
      return chainInterceptors(final, clientInterceptors)(request);
    },
  } as Transport;
}
