import { type RunningSystem, startSystem } from "../../apps/all-in-one/system.js";
import { loadConfig, type RailgateConfig } from "../../platform/config.js";
import type { Clock } from "../../platform/time.js";

/** 32+ characters, as RAILGATE_MANAGEMENT_KEY must be. */
export const MANAGEMENT_KEY = "test-management-key-0123456789abcdef";

/**
 * The whole system on free ports against the given Redis (or the memory store).
 * `overrides.env` is parsed by the configuration schema like a real environment
 * (RATE_LIMIT_PER_MINUTE and the like take effect); the other overrides win.
 *
 * Without the embedded engine unless a suite asks for it (`embeddedEngine: "auto"`): its eSpeak
 * worker threads take seconds to start (tens on a loaded 2-core machine), and a suite that only
 * manages guardrails, keys or workspaces never speaks through it. Guardrails still normalize
 * its model ids: the guardrail service reads the whole catalog, engine or not.
 */
export async function startTestSystem(
  redisUrl: string | undefined,
  overrides: Partial<RailgateConfig> = {},
  seams: { clock?: Clock } = {},
): Promise<RunningSystem> {
  const config: RailgateConfig = {
    ...loadConfig(overrides.env ?? {}),
    host: "127.0.0.1",
    gatewayPorts: { global: 0, europe: 0, us: 0 },
    guardrailGrpcPort: 0,
    speechGrpcPort: 0,
    redisUrl,
    managementKey: MANAGEMENT_KEY,
    // Every suite runs in either topology: RAILGATE_TEST_TRANSPORT=grpc puts the loopback gRPC
    // hop back between the gateway and the services (npm test runs the HTTP suites both ways).
    internalTransport: process.env.RAILGATE_TEST_TRANSPORT === "grpc" ? "grpc" : "in-process",
    // Messages cross the in-process transport by reference: frozen, a write by the side that
    // received one throws, so no suite can pass while a service or the gateway mutates one.
    freezeInProcessMessages: true,
    embeddedEngine: "off",
    ...overrides,
  };
  return startSystem(config, seams);
}
