import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunningSystem } from "../../apps/all-in-one/system.js";
import type { RegionName } from "../../domain/enums.js";
import type { RailgateConfig } from "../../platform/config/config.js";
import type { Clock } from "../../platform/time.js";
import { type Fakes, makeFakes, PROVIDERS, writeCatalog } from "./enforcement-catalog.js";
import { Gateway } from "./enforcement-gateway.js";
import { type LaneStore, startLaneStore } from "./lane.js";
import { startTestSystem } from "./system.js";

/**
 * The fake upstreams, a catalog pointing at them, the lane's store (lane.ts) and one
 * whole system, shared by every enforcement suite: the embedded engine takes
 * seconds to start, so it starts once. Suites stay independent by working in
 * workspaces, keys and guardrails of their own.
 */
export interface World {
  fakes: Fakes;
  redis: LaneStore;
  /** The environment the services were given (catalog file). */
  env: Record<string, string>;
  system: RunningSystem;
  gw: Gateway;
  /**
   * Another whole system with the same catalog, without the embedded engine unless asked
   * (`embeddedEngine: "auto"`); the caller closes it.
   */
  startSystem(
    redisUrl: string | undefined,
    env?: Record<string, string>,
    options?: { embeddedEngine?: "auto" | "off"; clock?: Clock },
  ): Promise<RunningSystem>;
}

/** The shared system's RAILGATE_REPLAY_DATA_KEY (32 bytes, base64). */
export const REPLAY_DATA_KEY = Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString(
  "base64",
);

let shared: Promise<World> | undefined;
const cleanups: (() => Promise<void>)[] = [];

async function build(): Promise<World> {
  const fakes = makeFakes();
  await Promise.all(PROVIDERS.map((p) => fakes[p].start()));
  cleanups.push(() => Promise.all(PROVIDERS.map((p) => fakes[p].close())).then(() => {}));
  const dir = mkdtempSync(join(tmpdir(), "railgate-enforcement-"));
  cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
  const env = {
    RAILGATE_SPEECH_CATALOG_FILE: writeCatalog(dir, fakes),
    // Workspaces may keep their inputs for what-if replays (replay_data "encrypted_input").
    RAILGATE_REPLAY_DATA_KEY: REPLAY_DATA_KEY,
  };
  const redis = await startLaneStore();
  cleanups.push(() => redis.stop());
  const startSystem: World["startSystem"] = (redisUrl, extra = {}, options = {}) =>
    startTestSystem(
      redisUrl,
      {
        env: { ...env, ...extra },
        embeddedEngine: options.embeddedEngine ?? "off",
        enginePoolSize: 2,
        // Every scrape reads the store: a test sees each charge in the budget gauges at once.
        budgetGaugesTtlMs: 0,
      } satisfies Partial<RailgateConfig>,
      { clock: options.clock },
    );
  const system = await startSystem(redis.url, {}, { embeddedEngine: "auto" });
  cleanups.push(() => system.close());
  return { fakes, redis, env, system, gw: new Gateway(system), startSystem };
}

/**
 * Registers hooks in the calling describe(): the shared world before its
 * tests (started by the first suite that asks), and fakes that forget their
 * requests before each test.
 */
export function useWorld(): World {
  const w = {} as World;
  before(async function () {
    this.timeout(180_000);
    shared ??= build();
    Object.assign(w, await shared);
  });
  beforeEach(() => {
    for (const p of PROVIDERS) w.fakes?.[p].reset();
  });
  return w;
}

// A root-level hook: runs once, after every suite of the run.
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

export type { RegionName };
