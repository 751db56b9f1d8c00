import type { AudioClipStore, ClipLimits, ClipUsage, PutResult, StoredClip } from "./types.js";

interface Entry {
  scope: string;
  meta: string;
  chunks: Buffer[];
  bytes: number;
  expiresAtMs: number;
}

/**
 * The embedded store's audio cache, in this process' memory: each workspace within its byte
 * budget, and every workspace together within `capBytes` (the process' memory is one pool).
 * One Map in order of last use (a use moves the entry to the end) gives least-recently-used
 * eviction without a second index; per-workspace eviction walks it from the oldest end.
 */
export class MemoryAudioClips implements AudioClipStore {
  private readonly entries = new Map<string, Entry>();
  private readonly scopeBytes = new Map<string, number>();
  private totalBytes = 0;
  private readonly counts = new Map<string, { hits: number; misses: number; collapsed: number }>();

  private countsOf(scope: string) {
    let c = this.counts.get(scope);
    if (!c) {
      c = { hits: 0, misses: 0, collapsed: 0 };
      this.counts.set(scope, c);
    }
    return c;
  }

  constructor(
    private readonly capBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(scope: string, hash: string): Promise<StoredClip | undefined> {
    const id = `${scope}\u0000${hash}`;
    const entry = this.entries.get(id);
    if (!entry || entry.expiresAtMs <= this.now()) {
      if (entry) this.drop(id, entry);
      return undefined;
    }
    this.countsOf(scope).hits++;
    this.entries.delete(id);
    this.entries.set(id, entry);
    return { meta: entry.meta, chunks: entry.chunks };
  }

  async put(
    scope: string,
    hash: string,
    meta: string,
    chunks: readonly Uint8Array[],
    limits: ClipLimits,
  ): Promise<PutResult> {
    const id = `${scope}\u0000${hash}`;
    const present = this.entries.get(id);
    if (present && present.expiresAtMs > this.now()) {
      this.entries.delete(id);
      this.entries.set(id, present);
      return { outcome: "exists" };
    }
    if (present) this.drop(id, present);
    const bytes = chunks.reduce((n, c) => n + c.byteLength, 0);
    if (bytes > limits.budgetBytes || bytes > this.capBytes) return { outcome: "too-large" };
    let evicted = 0;
    for (const [otherId, other] of this.entries) {
      const scopeFull = (this.scopeBytes.get(scope) ?? 0) + bytes > limits.budgetBytes;
      const processFull = this.totalBytes + bytes > this.capBytes;
      if (!scopeFull && !processFull) break;
      // The workspace's own budget evicts only its clips; the process cap evicts anyone's.
      if (processFull || other.scope === scope) {
        this.drop(otherId, other);
        evicted++;
      }
    }
    const entry: Entry = {
      scope,
      meta,
      // Copies: the caller's buffers may be views into larger ones it reuses.
      chunks: chunks.map((c) => Buffer.from(c)),
      bytes,
      expiresAtMs: this.now() + limits.ttlMs,
    };
    this.entries.set(id, entry);
    this.scopeBytes.set(scope, (this.scopeBytes.get(scope) ?? 0) + bytes);
    this.totalBytes += bytes;
    return { outcome: "stored", evicted };
  }

  async usage(scope: string): Promise<ClipUsage> {
    let clips = 0;
    for (const e of this.entries.values()) if (e.scope === scope) clips++;
    return { clips, bytes: this.scopeBytes.get(scope) ?? 0, ...this.countsOf(scope) };
  }

  async count(scope: string, outcome: "misses" | "collapsed", _ttlMs: number): Promise<void> {
    this.countsOf(scope)[outcome]++;
  }

  private drop(id: string, entry: Entry): void {
    this.entries.delete(id);
    const left = (this.scopeBytes.get(entry.scope) ?? 0) - entry.bytes;
    if (left > 0) this.scopeBytes.set(entry.scope, left);
    else this.scopeBytes.delete(entry.scope);
    this.totalBytes -= entry.bytes;
  }
}
