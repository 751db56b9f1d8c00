import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Counter, Histogram } from "prom-client";
import {
  type CounterChild,
  counterChild,
  type HistogramChild,
  histogramChild,
} from "./metric-children.js";
import { grpcClientDuration, grpcServerCalls, grpcServerDuration } from "./metrics.js";

type Labels = "service" | "method" | "code";

/** Prometheus users know gRPC codes by their names (OK, PERMISSION_DENIED...). */
function codeName(code: number): string {
  return code === 0
    ? "OK"
    : (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

/**
 * Records one finished call by procedure and final code (a Connect Code, or 0 for OK: Connect
 * has no Code for success). Label children are made on first use: a call costs a map lookup (and
 * metric-children.ts's children, no label hashing).
 */
type Observe = (service: string, method: string, code: number, seconds: number) => void;

function recorder(duration: Histogram<Labels>, calls?: Counter<Labels>): Observe {
  const children = new Map<string, { count?: CounterChild; time: HistogramChild }[]>();
  return (service, method, code, seconds) => {
    const key = `${service}/${method}`;
    let byCode = children.get(key);
    if (!byCode) {
      byCode = [];
      children.set(key, byCode);
    }
    let child = byCode[code];
    if (!child) {
      const name = codeName(code);
      child = {
        count: calls && counterChild(calls, { service, method, code: name }),
        time: histogramChild(duration, { service, method, code: name }),
      };
      byCode[code] = child;
    }
    child.count?.inc();
    child.time.observe(seconds);
  };
}

function codeOf(err: unknown): Code {
  return err instanceof ConnectError ? err.code : Code.Unknown;
}

/**
 * Times every call that passes through by its final code: a unary call when it answers, a
 * stream when it ends (a stream abandoned before its end counts as CANCELED). The same on
 * both sides of the hop, so the client's and the server's figures compare.
 */
function timingInterceptor(record: Observe): Interceptor {
  return (next) => async (req) => {
    const service = req.service.typeName;
    const method = req.method.name;
    const started = performance.now();
    const done = (code: number) =>
      record(service, method, code, (performance.now() - started) / 1000);
    try {
      const res = await next(req);
      if (!res.stream) {
        done(0);
        return res;
      }
      return { ...res, message: new TimedStream(res.message[Symbol.asyncIterator](), done) };
    } catch (err) {
      done(codeOf(err));
      throw err;
    }
  };
}

/**
 * The services' side: counts (railgate_grpc_server_calls_total) and times
 * (railgate_grpc_server_duration_seconds) every call a service handles, in-process calls included.
 */
export const grpcMetricsInterceptor: Interceptor = timingInterceptor(
  recorder(grpcServerDuration, grpcServerCalls),
);

/**
 * The gateway's side (railgate_grpc_client_duration_seconds): each call to a service as the
 * gateway saw it, over gRPC or in process; next to the server's figure, the difference is the hop.
 */
export const grpcClientMetricsInterceptor: Interceptor = timingInterceptor(
  recorder(grpcClientDuration),
);

/**
 * A stream's messages, timed when it ends: OK at its end, the error's code when it fails,
 * CANCELED when the reader returns it early. A plain iterator rather than an async generator
 * with `yield*` (a few promise turns per message, on every audio chunk): one `then` per message.
 */
class TimedStream<T> implements AsyncIterableIterator<T> {
  private timed = false;

  constructor(
    private readonly messages: AsyncIterator<T>,
    private readonly done: (code: number) => void,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<T>> {
    return this.messages.next().then(
      (step) => {
        if (step.done) this.end(0);
        return step;
      },
      (err: unknown) => {
        this.end(codeOf(err));
        throw err;
      },
    );
  }

  async return(value?: unknown): Promise<IteratorResult<T>> {
    try {
      return (await this.messages.return?.(value)) ?? { done: true, value: value as T };
    } finally {
      this.end(Code.Canceled);
    }
  }

  private end(code: number): void {
    if (this.timed) return;
    this.timed = true;
    this.done(code);
  }
}
