import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Counter } from "prom-client";
import { grpcServerCalls } from "./metrics.js";

type Child = ReturnType<Counter<"service" | "method" | "code">["labels"]>;

/** One label child per procedure and code, made on first use: a call costs a map lookup. */
const children = new Map<string, Child[]>();

/** `code` is a Connect Code, or 0 for OK (Connect has no Code for success). */
function count(service: string, method: string, code: number): void {
  const key = `${service}/${method}`;
  let byCode = children.get(key);
  if (!byCode) {
    byCode = [];
    children.set(key, byCode);
  }
  let child = byCode[code];
  if (!child) {
    // Prometheus users know gRPC codes by their names (OK, PERMISSION_DENIED...).
    const name =
      code === 0
        ? "OK"
        : (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
    child = grpcServerCalls.labels(service, method, name);
    byCode[code] = child;
  }
  child.inc();
}

function codeOf(err: unknown): Code {
  return err instanceof ConnectError ? err.code : Code.Unknown;
}

/**
 * Counts every call a service handles by its final code: a unary call when it answers, a
 * stream when it ends (a cancelled stream counts as CANCELED).
 */
export const grpcMetricsInterceptor: Interceptor = (next) => async (req) => {
  const service = req.service.typeName;
  const method = req.method.name;
  try {
    const res = await next(req);
    if (!res.stream) {
      count(service, method, 0);
      return res;
    }
    const upstream = res.message;
    async function* counted() {
      let code: number = Code.Canceled;
      try {
        yield* upstream;
        code = 0;
      } catch (err) {
        code = codeOf(err);
        throw err;
      } finally {
        count(service, method, code);
      }
    }
    return { ...res, message: counted() };
  } catch (err) {
    count(service, method, codeOf(err));
    throw err;
  }
};
