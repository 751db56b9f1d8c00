import { isStoreUnavailable } from "./store-availability.js";

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (err: unknown) => void;
}

interface ScopeQueue<T, R> {
  waiting: Waiting<T, R>[];
  /** A group of this scope is on its way to the store (or about to be sent). */
  busy: boolean;
}

/**
 * Group commit per scope: calls made in the same event-loop turn, and calls
 * made while the scope's previous group is on its way, go to the store
 * together, as one call for many requests (one script on Redis: one socket
 * write and one reply instead of one each). A lone call waits for nothing but
 * the end of the current turn, so an idle process pays no delay; under load,
 * groups grow with the round trip. One group per scope at a time: a scope's
 * keys share one hash tag (one Redis Cluster slot), so a group is one atomic
 * script whose items run in the order they were submitted, each exactly as it
 * would alone.
 *
 * A request that meets an error of its own inside the script (a counter of the
 * wrong type) fails alone. A group that fails fails each of its calls with the
 * store's error. When the
 * store did not answer, the calls still waiting behind it fail at once with
 * that error too, never sent: each would wait its own command time-out for the
 * same answer (a caller that must not lose its write keeps it for retry).
 */
export class GroupCommit<T, R> {
  private readonly scopes = new Map<string, ScopeQueue<T, R>>();
  private readonly idleWaiters: (() => void)[] = [];

  constructor(
    /**
     * Sends one group; answers one result per item, in order, or the Error that item alone
     * met (its call fails; the others' stand).
     */
    private readonly send: (scope: string, items: T[]) => Promise<(R | Error)[]>,
    /** Items per group at most: bounds how long one script keeps Redis busy. */
    private readonly maxItems: number,
  ) {}

  submit(scope: string, item: T): Promise<R> {
    let q = this.scopes.get(scope);
    if (!q) {
      q = { waiting: [], busy: false };
      this.scopes.set(scope, q);
    }
    const queue = q;
    return new Promise<R>((resolve, reject) => {
      queue.waiting.push({ item, resolve, reject });
      if (!queue.busy) {
        queue.busy = true;
        // The end of this turn: the calls other requests make in it join the group.
        setImmediate(() => void this.drain(scope, queue));
      }
    });
  }

  /** Resolves once every call submitted so far has its answer (shutdown, before the store closes). */
  flush(): Promise<void> {
    if (this.scopes.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async drain(scope: string, q: ScopeQueue<T, R>): Promise<void> {
    while (q.waiting.length > 0) {
      const group = q.waiting.splice(0, this.maxItems);
      try {
        const results = await this.send(
          scope,
          group.map((w) => w.item),
        );
        group.forEach((w, i) => {
          const result = results[i];
          if (result instanceof Error) w.reject(result);
          else w.resolve(result as R);
        });
      } catch (err) {
        for (const w of group) w.reject(err);
        if (isStoreUnavailable(err)) for (const w of q.waiting.splice(0)) w.reject(err);
      }
    }
    q.busy = false;
    this.scopes.delete(scope);
    if (this.scopes.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
