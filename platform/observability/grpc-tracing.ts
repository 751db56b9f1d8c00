import type { Interceptor } from "@connectrpc/connect";
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  trace,
} from "@opentelemetry/api";
import { healthProbesTraced, recordFailure, startSpan, tracingEnabled } from "./tracing.js";

/** grpc.health.v1.Health: its calls get no span unless RAILGATE_TRACE_HEALTH_PROBES asks for them. */
const HEALTH_SERVICE = "grpc.health.v1.Health";

const headerGetter = {
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
  keys: (carrier: Headers) => [...carrier.keys()],
};

/**
 * Each stream step runs in the call's trace context: Connect iterates a handler's stream from
 * its own async context, where the handler's spans (Redis, upstream) would lose their parent.
 */
async function* inContext<T>(ctx: Context, source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      const step = await context.with(ctx, () => it.next());
      if (step.done) return;
      yield step.value;
    }
  } finally {
    await context.with(ctx, async () => {
      await it.return?.();
    });
  }
}

/**
 * A server span per call, continuing the caller's W3C `traceparent` metadata (the gateway's
 * request span); the same on the wire and in process. Off: one boolean check. Health checks
 * (Check, Watch) are probes a load balancer or an orchestrator repeats every few seconds: no
 * span unless RAILGATE_TRACE_HEALTH_PROBES.
 */
export const tracingInterceptor: Interceptor = (next) => async (req) => {
  if (!tracingEnabled()) return next(req);
  const service = req.method.parent.typeName;
  if (service === HEALTH_SERVICE && !healthProbesTraced()) return next(req);
  const parent = propagation.extract(ROOT_CONTEXT, req.header, headerGetter);
  const span = startSpan(
    `${service}/${req.method.name}`,
    SpanKind.SERVER,
    { "rpc.system": "grpc", "rpc.service": service, "rpc.method": req.method.name },
    parent,
  );
  const ctx = trace.setSpan(parent, span);
  let res: Awaited<ReturnType<typeof next>>;
  try {
    res = await context.with(ctx, () => next(req));
  } catch (err) {
    recordFailure(span, err);
    span.end();
    throw err;
  }
  if (!res.stream) {
    span.end();
    return res;
  }
  const message = res.message;
  async function* traced() {
    try {
      yield* inContext(ctx, message);
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  }
  return { ...res, message: traced() };
};
