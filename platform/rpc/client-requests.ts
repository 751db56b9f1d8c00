import { create, type DescMessage, type DescMethod } from "@bufbuild/protobuf";
import {
  Code,
  ConnectError,
  type ContextValues,
  createContextValues,
  type StreamRequest,
  type UnaryRequest,
} from "@connectrpc/connect";

type HeadersInit = ConstructorParameters<typeof Headers>[0];

/**
 * The request a client transport hands its interceptors, filled as Connect's own transports
 * fill it: one builder for every transport of ours (in process, node:http2, the benchmark's
 * grpc-js), so an interceptor sees the same request whichever carries the call. `baseUrl` is
 * the target's origin ("" in process).
 */
function requestCommon(
  baseUrl: string,
  method: DescMethod,
  signal: AbortSignal | undefined,
  header: HeadersInit,
  contextValues: ContextValues | undefined,
) {
  return {
    service: method.parent,
    requestMethod: "POST",
    url: `${baseUrl}/${method.parent.typeName}/${method.name}`,
    signal: signal ?? new AbortController().signal,
    header: new Headers(header),
    contextValues: contextValues ?? createContextValues(),
  };
}

/** A unary call's request: its message made a full message of the input type. */
export function unaryRequest<I extends DescMessage, O extends DescMessage>(
  baseUrl: string,
  method: DescMethod,
  signal: AbortSignal | undefined,
  header: HeadersInit,
  input: unknown,
  contextValues: ContextValues | undefined,
): UnaryRequest<I, O> {
  return {
    ...requestCommon(baseUrl, method, signal, header, contextValues),
    stream: false,
    method: method as never,
    message: create(method.input, input as never) as never,
  };
}

/** A streaming call's request: each message made a full message as it is read. */
export function streamRequest<I extends DescMessage, O extends DescMessage>(
  baseUrl: string,
  method: DescMethod,
  signal: AbortSignal | undefined,
  header: HeadersInit,
  input: AsyncIterable<unknown>,
  contextValues: ContextValues | undefined,
): StreamRequest<I, O> {
  return {
    ...requestCommon(baseUrl, method, signal, header, contextValues),
    stream: true,
    method: method as never,
    message: mapMessages(input, (m) => create(method.input, m as never)) as never,
  };
}

/**
 * `input` with `fn` applied to each message as it is read: an iterator, not an async generator,
 * so no extra promise turns per message; ending it early ends `input`.
 */
export function mapMessages(
  input: AsyncIterable<unknown>,
  fn: (message: unknown) => unknown,
): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      const it = input[Symbol.asyncIterator]();
      return {
        next: async () => {
          const r = await it.next();
          return r.done ? r : { done: false, value: fn(r.value) };
        },
        return: async (value?: unknown) => (await it.return?.(value)) ?? { done: true, value },
      };
    },
  };
}

/**
 * The wire transports carry unary and server-streaming calls only (the services have no other
 * kind): any other fails here with Unimplemented.
 */
export function refuseUnlessServerStreaming(method: DescMethod): void {
  if (method.methodKind !== "server_streaming") {
    throw new ConnectError(
      `${method.parent.typeName}.${method.name}: only unary and server-streaming calls are served here`,
      Code.Unimplemented,
    );
  }
}

/** A server-streaming call's one request message, as the interceptors left it. */
export async function firstRequestMessage(messages: AsyncIterable<unknown>): Promise<unknown> {
  for await (const m of messages) return m;
  throw new ConnectError("protocol error: missing request message", Code.Internal);
}
