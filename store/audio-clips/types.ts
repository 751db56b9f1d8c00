/** A stored clip as the audio cache reads it back: its description (opaque here) and its audio. */
export interface StoredClip {
  meta: string;
  chunks: Buffer[];
}

/** How much a put may keep: the workspace's byte budget and the clip's time to live. */
export interface ClipLimits {
  budgetBytes: number;
  ttlMs: number;
}

/**
 * What a put did: "stored" (evicting `evicted` least recently used clips of the workspace to
 * fit), "exists" (an identical clip was already there: only its last use moved), or
 * "too-large" (the clip alone exceeds the workspace's budget: nothing changed).
 */
export type PutResult =
  | { outcome: "stored"; evicted: number }
  | { outcome: "exists" | "too-large" };

/** What a workspace's cache holds now, and how it answered so far (the console's workspace view). */
export interface ClipUsage {
  clips: number;
  bytes: number;
  /** Reads that found a clip (counted by get()). */
  hits: number;
  /** Requests that synthesized, and that joined a synthesis in progress (counted by count()). */
  misses: number;
  collapsed: number;
}

/**
 * The audio cache's storage, one namespace per workspace (scope): nothing is ever read across
 * workspaces. Each workspace keeps at most its byte budget, evicting the clips it used least
 * recently; a clip lives at most its time to live. Redis (one Lua script per operation, every key
 * on the workspace's hash tag) when the system runs on Redis; process memory otherwise.
 */
export interface AudioClipStore {
  /** The clip, marked as just used (and counted as a hit); undefined when absent or expired. */
  get(scope: string, hash: string): Promise<StoredClip | undefined>;
  /** Stores a complete clip, atomically with the evictions that make room for it. */
  put(
    scope: string,
    hash: string,
    meta: string,
    chunks: readonly Uint8Array[],
    limits: ClipLimits,
  ): Promise<PutResult>;
  usage(scope: string): Promise<ClipUsage>;
  /**
   * Counts a request that synthesized (a miss) or joined a synthesis in progress: decided by the
   * cache after reading, so a read that found nothing but then joined is not a miss. The counts
   * live `ttlMs` after the workspace's last activity (Redis).
   */
  count(scope: string, outcome: "misses" | "collapsed", ttlMs: number): Promise<void>;
}
