import type { Store } from "../../store/types.js";

/**
 * The store's invalidations as an async stream for one subscriber: "*" first
 * (drop everything you hold), then each changed scope, until the signal ends
 * the subscription. Scopes queue while the subscriber is busy, so none is lost.
 */
export async function* invalidationStream(
  store: Store,
  signal: AbortSignal,
): AsyncGenerator<string> {
  const queue: string[] = ["*"];
  let wake: (() => void) | undefined;
  const off = store.onInvalidate((scope) => {
    queue.push(scope);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    while (!signal.aborted) {
      const next = queue.shift();
      if (next !== undefined) {
        yield next;
        continue;
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
      wake = undefined;
    }
  } finally {
    off();
    signal.removeEventListener("abort", onAbort);
  }
}
