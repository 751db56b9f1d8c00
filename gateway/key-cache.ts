import type { Client } from "@connectrpc/connect";
import type { ApiKey } from "../gen/railgate/account/v1/account_pb.js";
import type { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { componentLogger } from "../platform/logger.js";

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
  private readonly entries = new Map<string, { key: ApiKey; scope: string }>();
  private live = false;
  private readonly stop = new AbortController();

  constructor(private readonly accounts: Client<typeof AccountService>) {}

  /** Follows the invalidation stream until close(), reconnecting when it drops. */
  start(): void {
    void this.follow();
  }

  private async follow(): Promise<void> {
    while (!this.stop.signal.aborted) {
      try {
        for await (const { scope } of this.accounts.watchInvalidations(
          {},
          { signal: this.stop.signal },
        )) {
          if (scope === "*") {
            this.entries.clear();
            this.live = true;
          } else {
            for (const [hash, e] of this.entries) if (e.scope === scope) this.entries.delete(hash);
          }
        }
      } catch (err) {
        if (!this.stop.signal.aborted)
          log.warn({ err: String(err) }, "invalidation stream lost; key cache off");
      }
      this.live = false;
      this.entries.clear();
      if (!this.stop.signal.aborted) await new Promise((r) => setTimeout(r, RETRY_MS).unref());
    }
  }

  get(hash: string): ApiKey | undefined {
    return this.live ? this.entries.get(hash)?.key : undefined;
  }

  set(hash: string, key: ApiKey): void {
    if (!this.live) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(hash, { key, scope: key.workspaceId || "org" });
  }

  /** After a change made through this gateway: do not wait for the stream to say so. */
  clear(): void {
    this.entries.clear();
  }

  close(): void {
    this.stop.abort();
  }
}
