import { loadConfig, type RailgateConfig } from "../../platform/config/config.js";

/**
 * The environment variables the CLI reads: where the gateway is, the caller's key, and for
 * --grpc where the services are and the hop's TLS files. A server's settings in the same shell
 * (LOG_LEVEL, MAX_BODY_BYTES, ...) are the server's: the CLI neither reads nor validates them.
 */
export const CLI_VARIABLES = [
  "RAILGATE_URL",
  "RAILGATE_TRANSPORT",
  "RAILGATE_MANAGEMENT_KEY",
  "GUARDRAIL_GRPC_URL",
  "SPEECH_GRPC_URL",
  "GUARDRAIL_GRPC_PORT",
  "SPEECH_GRPC_PORT",
  "RAILGATE_GRPC_TLS_CERT",
  "RAILGATE_GRPC_TLS_KEY",
  "RAILGATE_GRPC_TLS_CA",
] as const;

/**
 * The CLI's settings, checked by the configuration's own rules; `url` (--url) is checked as
 * RAILGATE_URL is, so both get the same message. Throws ConfigError.
 */
export function cliSettings(env: NodeJS.ProcessEnv, url?: string): RailgateConfig {
  const own: Record<string, string> = {};
  for (const name of CLI_VARIABLES) {
    const value = env[name];
    if (value !== undefined) own[name] = value;
  }
  if (url !== undefined) own.RAILGATE_URL = url;
  return loadConfig(own);
}
