import type { ConnectError } from "@connectrpc/connect";

/** Response messages read before the caller asks for them (audio: up to 8 coalesced pieces). */
export const READ_AHEAD_MESSAGES = 8;

/** How a wire call is told what the reader needs: its flow control and its cancellation. */
export interface ResponseFlow {
  /** A message was taken; `queued` are still waiting. */
  taken(queued: number): void;
  /** The reader waits for a message that has not arrived. */
  waiting(): void;
  /** The reader stopped before the call ended. */
  cancel(): void;
}

/**
 * A server stream's responses as a client transport hands them to its caller: the response
 * headers once they (or a trailers-only end) arrive, then the messages as the caller asks for
 * them, then the call's error if it failed. The wire call pushes what it reads; `flow` lets it
 * read ahead a few messages and hold back past that, so a slow caller pushes back through
 * HTTP/2 flow control. One piece for every wire transport (node:http2, the benchmark's grpc-js).
 */
export class ResponseStream {
  private readonly queue: unknown[] = [];
  private done = false;
  private failure: ConnectError | undefined;
  private wake: (() => void) | undefined;
  private started: ((header: Headers) => void) | undefined;
  private failedEarly: ((err: ConnectError) => void) | undefined;
  /** The response headers; rejects when the call fails before any (trailers-only). */
  readonly header: Promise<Headers>;

  constructor(private readonly flow: ResponseFlow) {
    this.header = new Promise<Headers>((resolve, reject) => {
      this.started = resolve;
      this.failedEarly = reject;
    });
  }

  get queued(): number {
    return this.queue.length;
  }

  get ended(): boolean {
    return this.done;
  }

  headerArrived(header: Headers): void {
    this.started?.(header);
  }

  push(message: unknown): void {
    this.queue.push(message);
    this.wake?.();
  }

  /** The call ended; an error before any header fails the call as a whole. */
  end(error: ConnectError | undefined): void {
    this.done = true;
    this.failure = error;
    // Settles the header only if nothing did before (a settled promise ignores the call).
    if (error) this.failedEarly?.(error);
    else this.started?.(new Headers());
    this.wake?.();
  }

  async *messages(): AsyncGenerator<never> {
    try {
      for (;;) {
        if (this.queue.length > 0) {
          const m = this.queue.shift();
          this.flow.taken(this.queue.length);
          yield m as never;
          continue;
        }
        if (this.done) {
          if (this.failure) throw this.failure;
          return;
        }
        this.flow.waiting();
        await new Promise<void>((r) => {
          this.wake = r;
        });
        this.wake = undefined;
      }
    } finally {
      // The caller stopped reading early: end the call (the server's handler is cancelled).
      if (!this.done) this.flow.cancel();
    }
  }
}
