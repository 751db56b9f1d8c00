import {
  type DeprecatedVariable,
  deprecatedVariables,
  loadConfig,
  type RailgateConfig,
  RENAMED_VARIABLES,
} from "../../platform/config/config.js";

/**
 * The environment variables the CLI reads: where the gateway is, the caller's key, and for
 * --grpc where the services are and the hop's TLS files. A server's settings in the same shell
 * (RAILGATE_LOG_LEVEL, RAILGATE_MAX_BODY_BYTES, ...) are the server's: the CLI neither reads nor
 * validates them.
 */
export const CLI_VARIABLES = [
  "RAILGATE_URL",
  "RAILGATE_TRANSPORT",
  "RAILGATE_MANAGEMENT_KEY",
  "RAILGATE_GUARDRAIL_GRPC_URL",
  "RAILGATE_SPEECH_GRPC_URL",
  "RAILGATE_GUARDRAIL_GRPC_PORT",
  "RAILGATE_SPEECH_GRPC_PORT",
  "RAILGATE_GRPC_TLS_CERT",
  "RAILGATE_GRPC_TLS_KEY",
  "RAILGATE_GRPC_TLS_CA",
] as const;

/** The CLI's variables under their current and their deprecated names, and nothing else. */
function ownVariables(env: NodeJS.ProcessEnv, names: readonly string[]): Record<string, string> {
  const wanted = new Set<string>(names);
  const own: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    const current = RENAMED_VARIABLES[name] ?? name;
    if (value !== undefined && wanted.has(current)) own[name] = value;
  }
  return own;
}

/** The CLI's own variables set under a deprecated name (the server's are not its to mention). */
export function cliDeprecations(env: NodeJS.ProcessEnv): DeprecatedVariable[] {
  return deprecatedVariables(ownVariables(env, CLI_VARIABLES));
}

/**
 * The CLI's settings, checked by the configuration's own rules; `url` (--url) is checked as
 * RAILGATE_URL is, so both get the same message. Throws ConfigError.
 */
export function cliSettings(env: NodeJS.ProcessEnv, url?: string): RailgateConfig {
  const own = ownVariables(env, CLI_VARIABLES);
  if (url !== undefined) own.RAILGATE_URL = url;
  return loadConfig(own);
}

/**
 * Only the TLS files of the internal hop, for the containers' gRPC health probe: the probe runs
 * beside a service and must not fail on a setting of the service's that it never uses.
 */
export function grpcTlsSettings(env: NodeJS.ProcessEnv): RailgateConfig["grpcTls"] {
  return loadConfig(
    ownVariables(env, ["RAILGATE_GRPC_TLS_CERT", "RAILGATE_GRPC_TLS_KEY", "RAILGATE_GRPC_TLS_CA"]),
  ).grpcTls;
}

/** What `railgate config export|import` reads: where the deployment's store and database are. */
const STORE_VARIABLES = [
  "RAILGATE_STORE",
  "REDIS_URL",
  "RAILGATE_REDIS_CLUSTER_NODES",
  "RAILGATE_REDIS_PREFIX",
  "RAILGATE_REDIS_COMMAND_TIMEOUT_MS",
  "RAILGATE_REDIS_CONNECT_TIMEOUT_MS",
  "DATABASE_URL",
  "RAILGATE_DATABASE_POOL_MAX",
  "RAILGATE_DATA_DIR",
];

/** The store's and database's settings, as the services read them, and no other. */
export function storeSettings(env: NodeJS.ProcessEnv): RailgateConfig {
  return loadConfig(ownVariables(env, STORE_VARIABLES));
}
