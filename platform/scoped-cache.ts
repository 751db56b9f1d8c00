/** The epochs a load started under: see ScopedCache.set. */
export interface CacheSnapshot {
  readonly global: number;
  readonly epochs: ReadonlyMap<string, number>;
}

/**
 * Values that belong to a scope (a workspace, or "org"), dropped a scope at a time when
 * something in it changes ("*": everything): the services' principals
 * (governance/governance-cache.ts, told by the store's pub/sub) and the gateway's keys
 * (gateway/key-cache.ts, told by AccountService's invalidation stream) are the same cache.
 */
export class ScopedCache<V> {
  private readonly entries = new Map<string, { value: V; scope: string; at: number }>();
  /** Bumped per scope on invalidation, so a load that raced a change is not cached. */
  private readonly epochs = new Map<string, number>();
  private globalEpoch = 0;

  constructor(
    private readonly options: {
      /** Entries kept at most: one more clears them all (a bound, not an eviction policy). */
      maxEntries: number;
      /** Entries older than this are not served; unset = until invalidated. */
      maxAgeMs?: number;
    },
  ) {}

  get(key: string): V | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    const { maxAgeMs } = this.options;
    if (maxAgeMs !== undefined && Date.now() - hit.at >= maxAgeMs) return undefined;
    return hit.value;
  }

  /** Taken before a load: set() with it caches the result only if nothing changed meanwhile. */
  snapshot(): CacheSnapshot {
    return { global: this.globalEpoch, epochs: new Map(this.epochs) };
  }

  /**
   * Caches `value` under `key` in `scope`, unless an invalidation of that scope (or of
   * everything) came after `since`: the loaded value may then predate the change.
   */
  set(key: string, scope: string, value: V, since?: CacheSnapshot): void {
    if (
      since &&
      (since.global !== this.globalEpoch ||
        (since.epochs.get(scope) ?? 0) !== (this.epochs.get(scope) ?? 0))
    )
      return;
    if (this.entries.size >= this.options.maxEntries) this.entries.clear();
    this.entries.set(key, { value, scope, at: Date.now() });
  }

  /** Drops a scope's entries ("*": every entry). */
  invalidate(scope: string): void {
    if (scope === "*") {
      this.globalEpoch++;
      this.entries.clear();
      return;
    }
    this.epochs.set(scope, (this.epochs.get(scope) ?? 0) + 1);
    for (const [key, e] of this.entries) if (e.scope === scope) this.entries.delete(key);
  }
}
