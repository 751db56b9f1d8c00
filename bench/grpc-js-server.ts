import { type DescMethod, fromBinary, toBinary } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createServiceImplSpec,
  type Interceptor,
} from "@connectrpc/connect";
import {
  invokeUnaryImplementation,
  transformInvokeImplementation,
} from "@connectrpc/connect/protocol";
import * as grpc from "@grpc/grpc-js";
import { peerVerifiedKey } from "../platform/auth/peer-identity.js";
import type { ServiceRegistration } from "../platform/rpc/in-process-transport.js";

type ImplSpec = ReturnType<typeof createServiceImplSpec>;
type MethodSpec = ImplSpec["methods"][string];

function headersOf(md: grpc.Metadata): Headers {
  const h = new Headers();
  for (const [key, values] of Object.entries(md.toJSON())) {
    for (const v of values) h.append(key, typeof v === "string" ? v : v.toString("base64"));
  }
  return h;
}

function metadataOf(...all: Headers[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const h of all) {
    h.forEach((value, key) => {
      if (key.endsWith("-bin")) md.add(key, Buffer.from(value, "base64"));
      else md.add(key, value);
    });
  }
  return md;
}

function hasAny(h: Headers): boolean {
  for (const _ of h.keys()) return true;
  return false;
}

function statusOf(err: unknown, trailer: Headers): grpc.StatusObject {
  const ce = ConnectError.from(err);
  return {
    code: ce.code as number as grpc.status,
    details: ce.rawMessage,
    metadata: metadataOf(trailer, ce.metadata),
  };
}

/** Calls being handled, so a shutdown knows when the last one has ended. */
export class CallTracker {
  private active = 0;
  private waiters: (() => void)[] = [];
  start(): void {
    this.active++;
  }
  end(): void {
    if (--this.active > 0) return;
    for (const wake of this.waiters.splice(0)) wake();
  }
  /** Resolves once no call is being handled. */
  idle(): Promise<void> {
    return this.active === 0 ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }
}

/**
 * Serves Connect `ServiceImpl`s from a @grpc/grpc-js server, through the same
 * Connect machinery the in-process transport uses: the interceptors (error
 * hiding, authentication), request headers, response headers and trailers,
 * deadlines and cancellation (a call the client cancels aborts the handler's
 * signal). Measured by bench/grpc-hop.ts only: it costs a third less CPU per
 * stream than Connect's server there, but end to end (peers scenario) the speech
 * process spent ~0.7 ms more per request with it, because its writes complete
 * sooner and so fewer audio pieces get merged (services/speech/coalesce.ts).
 */
export function addConnectServices(
  server: grpc.Server,
  services: ServiceRegistration[],
  interceptors: Interceptor[],
  calls = new CallTracker(),
): void {
  for (const { service, impl } of services) {
    const spec = createServiceImplSpec(service, impl);
    const definition: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
    const handlers: grpc.UntypedServiceImplementation = {};
    for (const m of Object.values(spec.methods) as MethodSpec[]) {
      const method = m.method as DescMethod;
      if (method.methodKind !== "unary" && method.methodKind !== "server_streaming") continue;
      definition[method.name] = {
        path: `/${service.typeName}/${method.name}`,
        requestStream: false,
        responseStream: method.methodKind === "server_streaming",
        requestSerialize: (v: unknown) => Buffer.from(toBinary(method.input, v as never)),
        requestDeserialize: (b: Buffer) => fromBinary(method.input, b),
        responseSerialize: (v: unknown) => {
          const u8 = toBinary(method.output, v as never);
          return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength);
        },
        responseDeserialize: (b: Buffer) => fromBinary(method.output, b),
      };
      handlers[method.name] = (
        method.methodKind === "unary"
          ? unaryHandler(m, interceptors, calls)
          : streamHandler(m, interceptors, calls)
      ) as grpc.UntypedHandleCall;
    }
    server.addService(definition as grpc.ServiceDefinition, handlers);
  }
}

function contextOf(
  m: MethodSpec,
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  abort: AbortController,
) {
  const deadline = call.getDeadline();
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  const values = createContextValues();
  if (call.getAuthContext()?.transportSecurityType === "ssl") values.set(peerVerifiedKey, true);
  return createHandlerContext({
    service: m.method.parent,
    method: m.method as never,
    protocolName: "grpc",
    requestMethod: "POST",
    url: call.getPath(),
    timeoutMs: Number.isFinite(ms) ? Math.max(0, ms - Date.now()) : undefined,
    requestSignal: abort.signal,
    requestHeader: headersOf(call.metadata),
    contextValues: values,
  });
}

function unaryHandler(
  m: MethodSpec,
  interceptors: Interceptor[],
  calls: CallTracker,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    calls.start();
    const abort = new AbortController();
    call.once("cancelled", () =>
      abort.abort(new ConnectError("cancelled by the client", Code.Canceled)),
    );
    const context = contextOf(m, call, abort);
    invokeUnaryImplementation(m as never, context, call.request as never, interceptors).then(
      (message) => {
        if (hasAny(context.responseHeader)) call.sendMetadata(metadataOf(context.responseHeader));
        callback(null, message, metadataOf(context.responseTrailer));
        context.abort();
        calls.end();
      },
      (err) => {
        callback(statusOf(err, context.responseTrailer), null);
        context.abort();
        calls.end();
      },
    );
  };
}

function streamHandler(
  m: MethodSpec,
  interceptors: Interceptor[],
  calls: CallTracker,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    calls.start();
    const abort = new AbortController();
    call.once("cancelled", () =>
      abort.abort(new ConnectError("cancelled by the client", Code.Canceled)),
    );
    const context = contextOf(m, call, abort);
    const invoke = transformInvokeImplementation(m as never, context, interceptors);
    void (async () => {
      const output = invoke(
        (async function* () {
          yield call.request;
        })() as never,
      )[Symbol.asyncIterator]();
      // A handler that ignores its signal still ends the call when the client goes away.
      const aborted = new Promise<never>((_, reject) => {
        const signal = context.signal;
        if (signal.aborted) reject(signal.reason);
        else signal.addEventListener("abort", () => reject(signal.reason), { once: true });
      });
      aborted.catch(() => {});
      let first = true;
      try {
        for (;;) {
          const next = await Promise.race([output.next(), aborted]);
          if (next.done) break;
          if (call.cancelled) return;
          if (first) {
            first = false;
            if (hasAny(context.responseHeader))
              call.sendMetadata(metadataOf(context.responseHeader));
          }
          // The next message is asked for only once this one is on its way to the socket,
          // as Connect's server did: while the hop is busy, audio pieces pile up in the
          // service and leave merged (services/speech/coalesce.ts), fewer and larger.
          await Promise.race([
            new Promise<void>((resolve) => call.write(next.value, () => resolve())),
            aborted,
          ]);
        }
        call.end(metadataOf(context.responseTrailer));
      } catch (err) {
        if (!call.cancelled) call.emit("error", statusOf(err, context.responseTrailer));
      } finally {
        context.abort();
        // Ends the implementation's generator (its finally blocks settle and record).
        await output.return?.(undefined);
        calls.end();
      }
    })();
  };
}
