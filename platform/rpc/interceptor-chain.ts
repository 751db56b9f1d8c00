import type { Interceptor } from "@connectrpc/connect";

/**
 * Wraps a transport's final call in the caller's interceptors, first listed
 * outermost, as Connect's own transports do (its `applyInterceptors` is not
 * part of the public API).
 */
export function chainInterceptors<T>(final: T, interceptors: Interceptor[]): T {
  return interceptors.reduceRight(
    (next, interceptor) => interceptor(next as never) as T,
    final,
  ) as T;
}
