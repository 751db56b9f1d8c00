import type { Client } from "@connectrpc/connect";
import type { ApiKey } from "../gen/railgate/account/v1/account_pb.js";
import type { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { componentLogger } from "../platform/observability/logger.js";
import { ScopedCache } from "../platform/scoped-cache.js";

const log = componentLogger("key-cache");
const RETRY_MS = 1000;
const MAX_ENTRIES = 50_000;

/**
 * Authenticated keys, so a management request costs one service call instead
 * of two. It is only used while the AccountService invalidation stream is
 * connected: every change to a workspace's keys drops that workspace's
 * entries (on any replica, via Redis pub/sub), and while the stream is down
 * nothing is served from the cache at all.
 */
export class KeyCache {
  private readonly cache = new ScopedCache<ApiKey>({ maxEntries: MAX_ENTRIES });
  private live = false;
  private readonly stop = new AbortController();

  constructor(private readonly accounts: Client<typeof AccountService>) {}

  /** Follows the invalidation stream until close(), reconnecting when it drops. */
  start(): void {
    void this.follow();
  }

  private async follow(): Promise<void> {
    while (!this.stop.signal.aborted) {
      const began = Date.now();
      let ended = false;
      try {
        for await (const { scope } of this.accounts.watchInvalidations(
          {},
          { signal: this.stop.signal },
        )) {
          this.cache.invalidate(scope);
          if (scope === "*") this.live = true;
        }
        ended = true;
      } catch (err) {
        if (!this.stop.signal.aborted)
          log.warn({ err: String(err) }, "invalidation stream lost; key cache off");
      }
      this.live = false;
      this.cache.invalidate("*");
      // A stream the service ended (a replica draining) is followed again at once, through the
      // service address, on another replica; a failure, or a stream ending as soon as it began,
      // waits first, so a service that keeps ending streams is not called in a tight loop.
      const wait = ended && Date.now() - began >= RETRY_MS ? 0 : RETRY_MS;
      if (!this.stop.signal.aborted && wait > 0)
        await new Promise((r) => setTimeout(r, wait).unref());
    }
  }

  get(hash: string): ApiKey | undefined {
    return this.live ? this.cache.get(hash) : undefined;
  }

  set(hash: string, key: ApiKey): void {
    if (this.live) this.cache.set(hash, key.workspaceId || "org", key);
  }

  /** After a change made through this gateway: do not wait for the stream to say so. */
  clear(): void {
    this.cache.invalidate("*");
  }

  close(): void {
    this.stop.abort();
  }
}
