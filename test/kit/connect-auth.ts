import type { Interceptor } from "@connectrpc/connect";

/** A Connect client interceptor that authenticates every call with the given key. */
export function bearer(key: string): Interceptor {
  return (next) => (req) => {
    req.header.set("authorization", `Bearer ${key}`);
    return next(req);
  };
}
