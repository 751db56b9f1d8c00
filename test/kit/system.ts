import { type RunningSystem, startSystem } from "../../apps/all-in-one/system.js";
import { loadConfig, type RailgateConfig } from "../../platform/config/config.js";
import type { Clock } from "../../platform/time.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { sharedTestDatabase } from "./databases.js";

/** 32+ characters, as RAILGATE_MANAGEMENT_KEY must be. */
export const MANAGEMENT_KEY = "test-management-key-0123456789abcdef";

/**
 * The whole system on free ports against the given Redis (or, without one, the embedded store,
 * asked for by name so that start-up never probes the machine's own Redis on 6379).
 * `overrides.env` is parsed by the configuration schema like a real environment
 * (RAILGATE_RATE_LIMIT_PER_MINUTE and the like take effect); the other overrides win.
 *
 * Without the embedded engine unless a suite asks for it (`embeddedEngine: "auto"`): its eSpeak
 * worker threads take seconds to start (tens on a loaded 2-core machine), and a suite that only
 * manages guardrails, keys or workspaces never speaks through it. Guardrails still normalize
 * its model ids: the guardrail service reads the whole catalog, engine or not.
 */
export async function startTestSystem(
  redisUrl: string | undefined,
  overrides: Partial<RailgateConfig> = {},
  seams: { clock?: Clock; database?: SqlDatabase } = {},
): Promise<RunningSystem> {
  const config: RailgateConfig = {
    // Every test client is 127.0.0.1, and the concurrency suites open 200+ connections at
    // once: no per-address cap unless a suite sets one (test/faults/connection-lockout does).
    // No retries and no circuit breakers unless a suite turns them on (the routing suites do):
    // suites share a system, and an endpoint one suite's failing fake opened would answer the
    // next suite's requests differently; the error suites also count exactly one request each.
    ...loadConfig({
      RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: "0",
      RAILGATE_SPEECH_RETRIES: "0",
      RAILGATE_SPEECH_BREAKER_FAILURES: "0",
      // Suites share one database with a Redis each: a fresh Redis is not an emptied one.
      RAILGATE_CONFIG_REFILL: "off",
      ...overrides.env,
    }),
    host: "127.0.0.1",
    gatewayPorts: { global: 0, europe: 0, us: 0 },
    guardrailGrpcPort: 0,
    speechGrpcPort: 0,
    redisUrl,
    managementKey: MANAGEMENT_KEY,
    // Every suite runs in either topology: RAILGATE_TEST_TRANSPORT=grpc puts the loopback gRPC
    // hop back between the gateway and the services (npm run test:all runs the suites that exercise it both ways).
    internalTransport: process.env.RAILGATE_TEST_TRANSPORT === "grpc" ? "grpc" : "in-process",
    // Messages cross the in-process transport by reference: frozen, a write by the side that
    // received one throws, so no suite can pass while a service or the gateway mutates one.
    freezeInProcessMessages: true,
    embeddedEngine: "off",
    ...(redisUrl === undefined ? { store: "embedded" as const } : {}),
    ...overrides,
  };
  // The request log: the run's shared in-memory PGlite unless the suite brings a database (a
  // real PostgreSQL one, for the suites that run on both).
  return startSystem(config, {
    ...seams,
    database: seams.database ?? (await sharedTestDatabase()),
  });
}
