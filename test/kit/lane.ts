import type { DatabaseKind } from "./databases.js";
import { startRedis } from "./redis-server.js";

/**
 * `npm run test:all` sets RAILGATE_TEST_LANE=all: the in-process suites then run on a throwaway
 * redis-server and, where a suite is written for both databases, on PostgreSQL as well as PGlite.
 * `npm test` (the fast lane) leaves it unset and needs nothing but Node: the embedded store and
 * the in-memory PGlite. See test/lanes.ts for which suite runs in which lane.
 */
export const ALL_LANE = process.env.RAILGATE_TEST_LANE === "all";

/** The store a suite's system runs on: its URL (undefined = the embedded store) and its end. */
export interface LaneStore {
  url: string | undefined;
  stop(): Promise<void>;
}

/** A throwaway redis-server in the full lane; the embedded in-process store in the fast lane. */
export async function startLaneStore(): Promise<LaneStore> {
  if (ALL_LANE) return startRedis();
  return { url: undefined, stop: async () => {} };
}

/** The stores a suite written for both runs on in this lane. */
export const LANE_STORES: readonly ("redis" | "embedded")[] = ALL_LANE
  ? ["redis", "embedded"]
  : ["embedded"];

/** The request-log databases a suite written for both runs on in this lane. */
export const LANE_DATABASES: readonly DatabaseKind[] = ALL_LANE
  ? ["postgres", "embedded"]
  : ["embedded"];

/**
 * The Redis URL of a suite whose systems share state through it (replicas, split processes):
 * the embedded store lives in one process, so such a suite runs only in the full lane.
 */
export function sharedRedisUrl(store: LaneStore): string {
  if (store.url === undefined) {
    throw new Error(
      "this suite shares a Redis between systems: run it with RAILGATE_TEST_LANE=all",
    );
  }
  return store.url;
}
