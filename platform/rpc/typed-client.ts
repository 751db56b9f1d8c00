import type { DescMethodServerStreaming, DescService } from "@bufbuild/protobuf";
import {
  type CallOptions,
  type Client,
  createClient,
  type StreamResponse,
  type Transport,
} from "@connectrpc/connect";

/**
 * Connect's typed client (`createClient`), except that a server-streaming call hands the
 * transport's messages straight through: Connect wraps them in a down-compiled async generator
 * that delegates to another (several promise turns per message), which an audio stream pays
 * for every chunk. Same contract: `onHeader` once the call answers, `onTrailer` after the last
 * message, and, as Connect's, the iterable has no `return`: a caller gives up on a stream by
 * aborting its signal.
 */
export function createTypedClient<T extends DescService>(
  service: T,
  transport: Transport,
): Client<T> {
  const client = createClient(service, transport) as Record<string, unknown>;
  for (const method of service.methods) {
    if (method.methodKind === "server_streaming") {
      client[method.localName] = serverStreaming(transport, method as DescMethodServerStreaming);
    }
  }
  return client as Client<T>;
}

function serverStreaming(transport: Transport, method: DescMethodServerStreaming) {
  return (input: unknown, options?: CallOptions): AsyncIterable<unknown> => {
    const response = transport.stream(
      method,
      options?.signal,
      options?.timeoutMs,
      options?.headers,
      oneMessage(input),
      options?.contextValues,
    );
    return { [Symbol.asyncIterator]: () => new StreamReader(response, options) };
  };
}

class StreamReader implements AsyncIterator<unknown> {
  private messages: AsyncIterator<unknown> | undefined;
  private trailer: Headers | undefined;

  constructor(
    private readonly response: Promise<StreamResponse>,
    private readonly options: CallOptions | undefined,
  ) {
    // A call that fails before its first read still rejects here, not as an unhandled promise.
    response.catch(() => {});
  }

  next(): Promise<IteratorResult<unknown>> {
    // Steady state: the transport's own promise, no extra turn.
    if (this.messages !== undefined && this.options?.onTrailer === undefined) {
      return this.messages.next();
    }
    return this.step();
  }

  private async step(): Promise<IteratorResult<unknown>> {
    if (this.messages === undefined) {
      const res = await this.response;
      this.options?.onHeader?.(res.header);
      this.trailer = res.trailer;
      this.messages = res.message[Symbol.asyncIterator]();
    }
    const onTrailer = this.options?.onTrailer;
    if (onTrailer === undefined) return this.messages.next();
    const step = await this.messages.next();
    if (step.done && this.trailer) {
      onTrailer(this.trailer);
      this.trailer = undefined;
    }
    return step;
  }
}

/** The one request message as an async iterable (Connect's `createAsyncIterable` is a generator). */
function oneMessage(message: unknown): AsyncIterable<never> {
  return {
    [Symbol.asyncIterator]() {
      let given = false;
      return {
        next: () => {
          if (given) return Promise.resolve({ done: true, value: undefined as never });
          given = true;
          return Promise.resolve({ done: false, value: message as never });
        },
      };
    },
  };
}
