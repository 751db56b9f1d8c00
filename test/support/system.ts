import { loadConfig, type RailgateConfig } from "../../services/common/config.js";
import { type RunningSystem, startSystem } from "../../services/system.js";

/** 32+ characters, as RAILGATE_MANAGEMENT_KEY must be. */
export const MANAGEMENT_KEY = "test-management-key-0123456789abcdef";

/**
 * The whole system on free ports against the given Redis (or the memory store).
 * `overrides.env` is parsed by the configuration schema like a real environment
 * (RATE_LIMIT_PER_MINUTE and the like take effect); the other overrides win.
 */
export async function startTestSystem(
  redisUrl: string | undefined,
  overrides: Partial<RailgateConfig> = {},
): Promise<RunningSystem> {
  const config: RailgateConfig = {
    ...loadConfig(overrides.env ?? {}),
    host: "127.0.0.1",
    gatewayPorts: { global: 0, europe: 0, us: 0 },
    guardrailGrpcPort: 0,
    speechGrpcPort: 0,
    redisUrl,
    managementKey: MANAGEMENT_KEY,
    ...overrides,
  };
  return startSystem(config);
}
