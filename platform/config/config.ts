import { z } from "zod";
import { type Region, RegionSchema } from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { type AudioFormat, AudioFormatSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import { type EnumApiName, enumNames } from "../enum-names.js";
import type { GrpcTlsFiles } from "../rpc/grpc-tls.js";

/*
 * The regions and the speech formats are read from their proto enums, as domain/enums.ts and
 * domain/audio-formats.ts read them: the configuration sits below the domain layer, and the
 * proto is the one definition both derive their names from.
 */
type RegionName = EnumApiName<typeof Region>;
type AudioFormatName = EnumApiName<typeof AudioFormat>;
const REGION_NAMES = enumNames<typeof Region>(RegionSchema).names;
const AUDIO_FORMAT_NAMES = enumNames<typeof AudioFormat>(AudioFormatSchema).names;

/**
 * Where the speech catalog comes from (validated configuration: SPEECH_CATALOG_FILE,
 * OPENAI_API_KEY, OPENAI_BASE_URL): a catalog file, else the built-in catalog, which lists
 * OpenAI's models when `openAi` is set.
 */
export interface CatalogSource {
  file?: string;
  openAi?: { baseUrl?: string };
}

/**
 * Process configuration: every environment variable the services, the gateway
 * and the CLI read, parsed and validated by one schema at start-up. A bad
 * value refuses start-up with a message naming the variable, the rule and
 * what it got, instead of quietly becoming NaN or a default.
 */
/** The audio cache's settings (RAILGATE_AUDIO_CACHE_*); whether a workspace uses it is its own setting. */
export interface AudioCacheConfig {
  /** Bytes of audio one workspace may keep; its least recently used clips go first beyond. */
  workspaceBytes: number;
  /** The embedded store's cap over every workspace together (it lives in this process' memory). */
  memoryBytes: number;
  /** A hit costs this fraction of what the endpoint that produced the clip charges (0..1). */
  priceRatio: number;
  /** A clip is served for at most this long after it was stored. */
  ttlSeconds: number;
}

/** Defaults of RAILGATE_AUDIO_CACHE_*: the service's own when a caller (a test) gives none. */
export const AUDIO_CACHE_DEFAULTS: AudioCacheConfig = {
  workspaceBytes: 64 * 1_048_576,
  memoryBytes: 256 * 1_048_576,
  priceRatio: 0.1,
  ttlSeconds: 86_400,
};

/** Settings of crash recovery (RAILGATE_RECOVERY_*). */
export interface RecoveryConfig {
  boundMs: number;
  checkpointMs: number;
}

export interface RailgateConfig {
  host: string;
  gatewayPorts: Record<RegionName, number>;
  guardrailGrpcPort: number;
  /** Where the gRPC services listen: loopback in one process, 0.0.0.0 in containers. */
  grpcHost: string;
  speechGrpcPort: number;
  /**
   * When set, the process also serves GET /metrics without a key on this port, at grpcHost
   * (an internal network, like the gRPC ports): how split guardrail/speech processes are scraped.
   */
  metricsPort?: number;
  /** Where a stand-alone gateway (or the CLI) finds the services; unset = loopback ports. */
  guardrailGrpcUrl?: string;
  speechGrpcUrl?: string;
  /**
   * Which store to open (RAILGATE_STORE): "auto" = Redis at REDIS_URL / RAILGATE_REDIS_CLUSTER_NODES when
   * set, else the embedded store (a Redis that happens to answer on 6379 is never adopted
   * unasked); "redis" = Redis, failing start-up when none answers; "embedded" = the memory store.
   */
  store: "auto" | "redis" | "embedded";
  /** The operator CLI: the gateway it calls (RAILGATE_URL), and over which transport. */
  cli: {
    url: string;
    /** "http" (the public API, default) or "grpc" (the services' ports, for internal callers). */
    transport: "http" | "grpc";
  };
  /** Unset: the embedded store, unless `store` is "redis" (then redis://127.0.0.1:6379). */
  redisUrl?: string;
  /** Comma-separated host:port seeds; when set, a Redis Cluster is used. */
  redisClusterNodes?: string[];
  /** Prefix of every Redis key, so several deployments can share one server. */
  redisPrefix: string;
  /** A Redis command unanswered after this long fails (503), instead of hanging the request. */
  redisCommandTimeoutMs: number;
  redisConnectTimeoutMs: number;
  managementKey?: string;
  /** Service credential with which the gateway asserts the ingress region over gRPC. */
  internalToken?: string;
  /** Ingress region of callers that reach the gRPC listeners directly (not through the gateway). */
  grpcRegion: RegionName;
  /**
   * How `npm start`'s gateway reaches the services in its own process:
   * "in-process" (direct calls) or "grpc" (the loopback listeners).
   */
  internalTransport: "in-process" | "grpc";
  /** Deadline of the gateway's unary gRPC calls to services in other processes. */
  grpcUnaryTimeoutMs: number;
  /**
   * How the gateway's gRPC client tells a dead or frozen service replica and spreads calls
   * (RAILGATE_GRPC_PING_*, _CONNECT_TIMEOUT_MS, _CONNECTIONS_PER_ADDRESS; docs/failures.md).
   */
  grpcClient: {
    pingIntervalMs: number;
    pingTimeoutMs: number;
    connectTimeoutMs: number;
    connectionsPerAddress: number;
  };
  /** How long the gateway waits on a speech stream (RAILGATE_SPEECH_*_TIMEOUT_MS; see SpeechStreamDeadlines). */
  speechStream: SpeechStreamDeadlines;
  /** The speech service's circuit breakers and retries (RAILGATE_SPEECH_BREAKER_*, RAILGATE_SPEECH_RETRY_*). */
  speechRouting: SpeechRoutingConfig;
  /** Development check, never from the environment: freeze messages crossing in process (tests). */
  freezeInProcessMessages?: boolean;
  /**
   * Never from the environment: how long the guardrail budget gauges reuse one store reading
   * (default 5 s, see services/guardrail/budget-gauges.ts); tests set 0 to see every charge.
   */
  budgetGaugesTtlMs?: number;
  /** PEM files for TLS on the internal gRPC hop (mTLS: a gateway's client certificate proves it). */
  grpcTls?: GrpcTlsFiles;
  maxBodyBytes: number;
  maxSpeechBodyBytes: number;
  /** The speech API's response_format when a request names none (RAILGATE_SPEECH_DEFAULT_FORMAT). */
  speechDefaultFormat: AudioFormatName;
  /** Worker threads of the embedded speech engine; unset = one per core. */
  enginePoolSize?: number;
  /** "auto": the embedded engine when its package is installed; "off": never. */
  embeddedEngine: "auto" | "off";
  /**
   * "on": a store that lost its configuration (Redis restarted empty) is refilled from the
   * database at start-up and when noticed; "off": never (one database shared by deployments).
   */
  configRefill: "on" | "off";
  /** Requests per minute per key unless the key sets its own; 0 = unlimited. */
  rateLimitPerMinute: number;
  /** The audio cache of opted-in workspaces (docs/api.md "Audio cache"). */
  audioCache: AudioCacheConfig;
  /** The account's safety-retention settings (RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_*). */
  allowSafetyRetentionGoogle: boolean;
  allowSafetyRetentionOther: boolean;
  logLevel: string;
  /** json (default) or pretty (pino-pretty, for a human at a terminal). */
  logFormat: "json" | "pretty";
  /** On SIGTERM, how long in-flight requests (speech streams) may take to finish. */
  shutdownGraceMs: number;
  /** Settlements and generation records kept for retry while the store is down. */
  retryQueueMax: number;
  /**
   * A reservation whose process died is settled (interrupted) by a live one within this bound;
   * its owner checkpoints what it served every `checkpointMs`.
   */
  recovery: RecoveryConfig;
  /**
   * The PostgreSQL server of the request log, audit log and webhooks (DATABASE_URL); unset =
   * the embedded PGlite in `dataDir`.
   */
  databaseUrl?: string;
  /** Connections each process opens to that server at most. */
  databasePoolMax: number;
  /** Folder of local state: the embedded database lives in its pglite/ sub-folder. */
  dataDir: string;
  /** Never from the environment: the embedded database in memory, nothing on disk (tests). */
  embeddedDatabaseInMemory?: boolean;
  /** Request-log records older than this many days are deleted (whole daily partitions). */
  logRetentionDays: number;
  /** Log records waiting for the database at most; beyond it new ones are dropped and counted. */
  requestLogQueueMax: number;
  /** Audit events older than this many days are deleted (whole daily partitions). */
  auditRetentionDays: number;
  /**
   * RAILGATE_REPLAY_DATA_KEY: the AES-256-GCM key of the inputs kept for what-if replays
   * (workspaces with replay_data "encrypted_input"); unset, no workspace may choose it.
   */
  replayDataKey?: Buffer;

  /** Per gateway listener: node:http time-outs and a connection cap. */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxConnections: number;
    /** Open connections one client address may hold (0 = no cap: behind a load balancer). */
    maxConnectionsPerAddress: number;
  };
  /** Browser origins allowed to call the API (RAILGATE_CORS_ORIGINS); "*" = any; empty = no CORS at all. */
  corsOrigins: string[];
  /** Budget-alert webhook delivery (RAILGATE_WEBHOOK_*, docs/operations.md "Budget alerts (webhooks)"). */
  webhooks: WebhookDeliveryConfig;
  /** OpenTelemetry traces (OTEL_*): exported over OTLP/HTTP only when configured. */
  tracing: {
    exporter: "otlp" | "none";
    endpoint?: string;
    serviceName: string;
    /** RAILGATE_TRACE_HEALTH_PROBES: spans for /healthz and grpc.health.v1 calls too. */
    healthProbes: boolean;
  };
  /** The speech catalog: a file, else the built-in one (with OpenAI's models when keyed). */
  catalog: CatalogSource;
  /**
   * The environment the speech service reads upstream providers' API keys from: their variable
   * names are the catalog's own (`api_key_env`), so no schema can list them.
   */
  env: NodeJS.ProcessEnv;
}

/** Health-aware routing of the speech service (docs/api.md "Provider routing"). */
export interface SpeechRoutingConfig {
  /** Consecutive failures that open an endpoint's circuit breaker; 0 = no breaker. */
  breakerFailures: number;
  /** How long an open breaker skips its endpoint before one probe request may try it. */
  breakerCooldownMs: number;
  /** Retries of one endpoint after a 429 or 5xx before its first byte (0 = none). */
  retries: number;
  /** Backoff before retry n: a random wait up to min(max, base * 2^(n-1)) ("full jitter"). */
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  /**
   * The budget of retries: no retry starts once waiting for it would pass this many ms since the
   * request arrived (the gateway's first-message deadline: past it the client has its 524).
   */
  firstByteDeadlineMs: number;
}

/** The defaults of SpeechRoutingConfig: the schema's, and a service's built without a config. */
export const SPEECH_ROUTING_DEFAULTS: SpeechRoutingConfig = {
  // Five failures in a row: a provider that is down, not one unlucky request.
  breakerFailures: 5,
  breakerCooldownMs: 30_000,
  retries: 2,
  retryBackoffMs: 200,
  retryBackoffMaxMs: 2_000,
  // RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS's default.
  firstByteDeadlineMs: 10_000,
};

/**
 * The gateway's deadlines on a speech stream, which has no overall deadline (it lasts as long as
 * the audio): a speech service that froze must not hold a client's request open for good.
 */
export interface SpeechStreamDeadlines {
  /** Until the stream's first message (admission, filters and the provider's first audio): 524 after it. */
  firstMessageTimeoutMs: number;
  /** Between two messages once audio flows: the response is cut after it. */
  idleTimeoutMs: number;
}

export interface WebhookDeliveryConfig {
  /** One attempt's deadline: connecting, the answer's head and its body. */
  timeoutMs: number;
  /** A delivery is retried until this long after its event, then failed. */
  maxAgeMs: number;
  /** The first retry waits about this long, doubling per attempt up to backoffMaxMs (with jitter). */
  backoffBaseMs: number;
  backoffMaxMs: number;
  /** How often a worker looks for due deliveries. */
  workerIntervalMs: number;
  /** Attempts in flight at once per process. */
  concurrency: number;
  /** How often the control plane looks for guardrail shadows that expired (their webhook event). */
  shadowSweepIntervalMs: number;
}

/** Thrown when the environment holds a value the schema refuses; lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
}

/**
 * A start-up the operator must fix (a store that was asked for and does not answer): the process
 * prints the message as is and exits non-zero, as for a ConfigError.
 */
export class StartupRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartupRefused";
  }
}

/**
 * Names a setting had before every Railgate setting moved under RAILGATE_: old -> new. An old
 * name is still read, with one deprecation warning at start-up (deprecatedVariables); when both
 * are set, the new one wins and the warning says the old one is ignored.
 */
export const RENAMED_VARIABLES: Readonly<Record<string, string>> = {
  ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE: "RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE",
  ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER: "RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER",
  AUDIO_CACHE_MEMORY_BYTES: "RAILGATE_AUDIO_CACHE_MEMORY_BYTES",
  AUDIO_CACHE_PRICE_RATIO: "RAILGATE_AUDIO_CACHE_PRICE_RATIO",
  AUDIO_CACHE_TTL_SECONDS: "RAILGATE_AUDIO_CACHE_TTL_SECONDS",
  AUDIO_CACHE_WORKSPACE_BYTES: "RAILGATE_AUDIO_CACHE_WORKSPACE_BYTES",
  AUDIT_LOG_RETENTION_DAYS: "RAILGATE_AUDIT_LOG_RETENTION_DAYS",
  CONFIG_REFILL: "RAILGATE_CONFIG_REFILL",
  CORS_ORIGINS: "RAILGATE_CORS_ORIGINS",
  DATABASE_POOL_MAX: "RAILGATE_DATABASE_POOL_MAX",
  GATEWAY_EU_PORT: "RAILGATE_GATEWAY_EU_PORT",
  GATEWAY_PORT: "RAILGATE_GATEWAY_PORT",
  GATEWAY_US_PORT: "RAILGATE_GATEWAY_US_PORT",
  GUARDRAIL_GRPC_PORT: "RAILGATE_GUARDRAIL_GRPC_PORT",
  GUARDRAIL_GRPC_URL: "RAILGATE_GUARDRAIL_GRPC_URL",
  HTTP_HEADERS_TIMEOUT_MS: "RAILGATE_HTTP_HEADERS_TIMEOUT_MS",
  HTTP_KEEP_ALIVE_TIMEOUT_MS: "RAILGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS",
  HTTP_MAX_CONNECTIONS: "RAILGATE_HTTP_MAX_CONNECTIONS",
  HTTP_MAX_CONNECTIONS_PER_ADDRESS: "RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS",
  HTTP_REQUEST_TIMEOUT_MS: "RAILGATE_HTTP_REQUEST_TIMEOUT_MS",
  LOG_FORMAT: "RAILGATE_LOG_FORMAT",
  LOG_LEVEL: "RAILGATE_LOG_LEVEL",
  MAX_BODY_BYTES: "RAILGATE_MAX_BODY_BYTES",
  METRICS_PORT: "RAILGATE_METRICS_PORT",
  RATE_LIMIT_PER_MINUTE: "RAILGATE_RATE_LIMIT_PER_MINUTE",
  REDIS_CLUSTER_NODES: "RAILGATE_REDIS_CLUSTER_NODES",
  REDIS_COMMAND_TIMEOUT_MS: "RAILGATE_REDIS_COMMAND_TIMEOUT_MS",
  REDIS_CONNECT_TIMEOUT_MS: "RAILGATE_REDIS_CONNECT_TIMEOUT_MS",
  REDIS_PREFIX: "RAILGATE_REDIS_PREFIX",
  REQUEST_LOG_QUEUE_MAX: "RAILGATE_REQUEST_LOG_QUEUE_MAX",
  SHUTDOWN_GRACE_MS: "RAILGATE_SHUTDOWN_GRACE_MS",
  SPEECH_BREAKER_COOLDOWN_MS: "RAILGATE_SPEECH_BREAKER_COOLDOWN_MS",
  SPEECH_BREAKER_FAILURES: "RAILGATE_SPEECH_BREAKER_FAILURES",
  SPEECH_CATALOG_FILE: "RAILGATE_SPEECH_CATALOG_FILE",
  SPEECH_ENGINE_WORKERS: "RAILGATE_SPEECH_ENGINE_WORKERS",
  SPEECH_FIRST_MESSAGE_TIMEOUT_MS: "RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS",
  SPEECH_GRPC_PORT: "RAILGATE_SPEECH_GRPC_PORT",
  SPEECH_GRPC_URL: "RAILGATE_SPEECH_GRPC_URL",
  SPEECH_IDLE_TIMEOUT_MS: "RAILGATE_SPEECH_IDLE_TIMEOUT_MS",
  SPEECH_MAX_BODY_BYTES: "RAILGATE_SPEECH_MAX_BODY_BYTES",
  SPEECH_RETRIES: "RAILGATE_SPEECH_RETRIES",
  SPEECH_RETRY_BACKOFF_MAX_MS: "RAILGATE_SPEECH_RETRY_BACKOFF_MAX_MS",
  SPEECH_RETRY_BACKOFF_MS: "RAILGATE_SPEECH_RETRY_BACKOFF_MS",
  STORE_RETRY_QUEUE_MAX: "RAILGATE_STORE_RETRY_QUEUE_MAX",
  TRACE_HEALTH_PROBES: "RAILGATE_TRACE_HEALTH_PROBES",
  WEBHOOK_BACKOFF_BASE_MS: "RAILGATE_WEBHOOK_BACKOFF_BASE_MS",
  WEBHOOK_BACKOFF_MAX_MS: "RAILGATE_WEBHOOK_BACKOFF_MAX_MS",
  WEBHOOK_CONCURRENCY: "RAILGATE_WEBHOOK_CONCURRENCY",
  WEBHOOK_MAX_AGE_MS: "RAILGATE_WEBHOOK_MAX_AGE_MS",
  WEBHOOK_TIMEOUT_MS: "RAILGATE_WEBHOOK_TIMEOUT_MS",
  WEBHOOK_WORKER_INTERVAL_MS: "RAILGATE_WEBHOOK_WORKER_INTERVAL_MS",
  RAILGATE_LOG_RETENTION_DAYS: "RAILGATE_REQUEST_LOG_RETENTION_DAYS",
};

/** An old name in use: which new name it stands for, and whether that new name overrode it. */
export interface DeprecatedVariable {
  name: string;
  replacement: string;
  /** Both were set: the new name's value is the one used. */
  ignored: boolean;
}

/** Whether a variable holds a value (docker-compose passes `${X:-}` as "": unset). */
function isSet(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== "";
}

/**
 * The environment under the schema's names: each old name's value moved to its new name unless
 * the new one is set too. Every name not in the table passes through as is.
 */
export function withCurrentNames(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const current: NodeJS.ProcessEnv = { ...env };
  for (const [old, replacement] of Object.entries(RENAMED_VARIABLES)) {
    const value = env[old];
    delete current[old];
    if (isSet(value) && !isSet(env[replacement])) current[replacement] = value;
  }
  return current;
}

/** The old names set in `env`, one entry each, in the table's order. */
export function deprecatedVariables(env: NodeJS.ProcessEnv): DeprecatedVariable[] {
  return Object.entries(RENAMED_VARIABLES)
    .filter(([old]) => isSet(env[old]))
    .map(([name, replacement]) => ({ name, replacement, ignored: isSet(env[replacement]) }));
}

/** The warning for an old name in use, naming the new one. */
export function deprecationMessage({ name, replacement, ignored }: DeprecatedVariable): string {
  return ignored
    ? `environment variable ${name} is deprecated and ignored: ${replacement} is set too and wins; unset ${name}`
    : `environment variable ${name} is deprecated: rename it ${replacement}`;
}

/** Echoed values are bounded: a configuration message never repeats a huge input. */
function quote(raw: string): string {
  return JSON.stringify(raw.length > 100 ? `${raw.slice(0, 100)}...` : raw);
}

/** Unset and empty are the same thing (docker-compose passes `${X:-}` as ""). */
const raw = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === "" ? undefined : v.trim()));

function integer(rule: string, min: number, max: number) {
  return <T extends number | undefined>(fallback: T) =>
    raw.transform((v, ctx): number | T => {
      if (v === undefined) return fallback;
      const n = Number(v);
      if (!/^\d+$/.test(v) || !Number.isSafeInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: "custom", message: `must be ${rule}, got ${quote(v)}` });
        return z.NEVER;
      }
      return n;
    });
}

/** A number from 0 to 1 (a share of a price). */
function fraction(fallback: number) {
  return raw.transform((v, ctx): number => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!/^(0|1|0?\.\d+|1\.0*)$/.test(v) || !(n >= 0 && n <= 1)) {
      ctx.addIssue({ code: "custom", message: `must be a number from 0 to 1, got ${quote(v)}` });
      return z.NEVER;
    }
    return n;
  });
}

const port = integer("a port number 0..65535", 0, 65_535);
const bytes = integer("a positive integer number of bytes", 1, 2 ** 40);
const millis = integer("a positive integer number of milliseconds", 1, 24 * 3600 * 1000);
const count = integer("a positive integer", 1, 1_000_000_000);
const zeroOrMore = integer("an integer >= 0 (0 = unlimited)", 0, 1_000_000_000);

function text<T extends string | undefined>(fallback: T) {
  return raw.transform((v): string | T => v ?? fallback);
}

function boolean(fallback: boolean) {
  return raw.transform((v, ctx) => {
    if (v === undefined) return fallback;
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    ctx.addIssue({ code: "custom", message: `must be "true" or "false", got ${quote(v)}` });
    return z.NEVER;
  });
}

function oneOf<const T extends readonly string[], F extends T[number] | undefined = T[number]>(
  values: T,
  fallback: F,
) {
  return raw.transform((v, ctx): T[number] | F => {
    if (v === undefined) return fallback;
    if ((values as readonly string[]).includes(v)) return v as T[number];
    ctx.addIssue({
      code: "custom",
      message: `must be one of ${values.join(", ")}, got ${quote(v)}`,
    });
    return z.NEVER;
  });
}

function url(protocols: string[], what: string) {
  return raw.transform((v, ctx) => {
    if (v === undefined) return undefined;
    let parsed: URL | undefined;
    try {
      parsed = new URL(v);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !protocols.includes(parsed.protocol)) {
      // Never echo a URL that failed to parse: it may well carry a password.
      ctx.addIssue({ code: "custom", message: `must be ${what}` });
      return z.NEVER;
    }
    return v;
  });
}

function secret(min: number) {
  return raw.transform((v, ctx) => {
    if (v === undefined) return undefined;
    if ([...v].length < min) {
      // The value is a credential: say how long it is, never what it is.
      ctx.addIssue({
        code: "custom",
        message: `must be at least ${min} characters, got ${[...v].length}`,
      });
      return z.NEVER;
    }
    return v;
  });
}

/** 32 bytes, base64 (standard or url-safe): an AES-256 key. */
const aes256Key = raw.transform((v, ctx) => {
  if (v === undefined || v === "") return undefined;
  const bytes = Buffer.from(v, v.includes("-") || v.includes("_") ? "base64url" : "base64");
  if (bytes.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    // A key: say what it must be, never what it is.
    ctx.addIssue({
      code: "custom",
      message: "must be 32 bytes in base64 (e.g. the output of `openssl rand -base64 32`)",
    });
    return z.NEVER;
  }
  return bytes;
});

const clusterNodes = raw.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const nodes = v
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = nodes.find((n) => !/^[^\s:]+:\d{1,5}$/.test(n) || Number(n.split(":")[1]) > 65_535);
  if (nodes.length === 0 || bad !== undefined) {
    ctx.addIssue({
      code: "custom",
      message: `must be a comma-separated list of host:port, got ${quote(bad ?? v)}`,
    });
    return z.NEVER;
  }
  return nodes;
});

/**
 * Comma-separated browser origins (scheme://host[:port], no path), or "*" spelled out. Kept in
 * the serialized form browsers send in Origin (lower case, default port dropped), so matching is
 * plain string equality.
 */
const corsOrigins = raw.transform((v, ctx): string[] => {
  if (v === undefined) return [];
  const origins: string[] = [];
  for (const item of v.split(",").map((s) => s.trim())) {
    if (item === "*") {
      origins.push(item);
      continue;
    }
    let parsed: URL | undefined;
    try {
      parsed = new URL(item);
    } catch {
      parsed = undefined;
    }
    const bare =
      parsed &&
      ["http:", "https:"].includes(parsed.protocol) &&
      !item.endsWith("/") &&
      parsed.pathname === "/" &&
      !parsed.search &&
      !parsed.hash &&
      !parsed.username;
    if (!parsed || !bare) {
      ctx.addIssue({
        code: "custom",
        message: `must be a comma-separated list of origins (http(s)://host[:port], no path) or *, got ${quote(item)}`,
      });
      return z.NEVER;
    }
    origins.push(parsed.origin);
  }
  return origins;
});

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

/** RAILGATE_LOG_LEVEL and RAILGATE_LOG_FORMAT: part of the one schema, and read alone by the logger (loggingSettings). */
const loggingFields = {
  RAILGATE_LOG_LEVEL: oneOf(LOG_LEVELS, "info"),
  RAILGATE_LOG_FORMAT: oneOf(["json", "pretty"] as const, "json"),
};

/** The one schema: environment variable name -> parsed value. */
export const configSchema = z
  .object({
    RAILGATE_GATEWAY_PORT: port(8080),
    RAILGATE_GATEWAY_EU_PORT: port(8081),
    RAILGATE_GATEWAY_US_PORT: port(8082),
    RAILGATE_HOST: text("0.0.0.0"),
    RAILGATE_GUARDRAIL_GRPC_PORT: port(50051),
    RAILGATE_SPEECH_GRPC_PORT: port(50052),
    RAILGATE_GRPC_HOST: text("127.0.0.1"),
    RAILGATE_METRICS_PORT: port(undefined),
    RAILGATE_GUARDRAIL_GRPC_URL: url(["http:", "https:"], "an http(s):// URL"),
    RAILGATE_SPEECH_GRPC_URL: url(["http:", "https:"], "an http(s):// URL"),
    RAILGATE_STORE: oneOf(["auto", "redis", "embedded"] as const, "auto"),
    RAILGATE_URL: url(["http:", "https:"], "an http(s):// URL"),
    RAILGATE_TRANSPORT: oneOf(["http", "grpc"] as const, "http"),
    REDIS_URL: url(["redis:", "rediss:"], "a redis:// or rediss:// URL"),
    RAILGATE_REDIS_CLUSTER_NODES: clusterNodes,
    RAILGATE_REDIS_PREFIX: text("rg"),
    RAILGATE_REDIS_COMMAND_TIMEOUT_MS: millis(1000),
    RAILGATE_REDIS_CONNECT_TIMEOUT_MS: millis(2000),
    RAILGATE_MANAGEMENT_KEY: secret(32),
    RAILGATE_INTERNAL_TOKEN: secret(32),
    RAILGATE_GRPC_REGION: oneOf(REGION_NAMES, "global"),
    RAILGATE_INTERNAL_TRANSPORT: oneOf(["in-process", "grpc"] as const, "in-process"),
    RAILGATE_GRPC_UNARY_TIMEOUT_MS: millis(10_000),
    // A frozen replica is left within interval + timeout (15 s); a ping costs a few bytes.
    RAILGATE_GRPC_PING_INTERVAL_MS: millis(10_000),
    RAILGATE_GRPC_PING_TIMEOUT_MS: millis(5_000),
    RAILGATE_GRPC_CONNECT_TIMEOUT_MS: millis(5_000),
    // Two per address: behind one balancer address, calls reach more than one replica.
    RAILGATE_GRPC_CONNECTIONS_PER_ADDRESS: integer("an integer from 1 to 16", 1, 16)(2),
    // As the unary calls' deadline: a frozen speech service costs a 524 after 10 s.
    RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS: millis(SPEECH_ROUTING_DEFAULTS.firstByteDeadlineMs),
    // As a provider's default timeout_ms and the engine's job time-out: a provider that pauses
    // is the speech service's to report (its own error and record), a frozen service is cut.
    RAILGATE_SPEECH_IDLE_TIMEOUT_MS: millis(30_000),
    RAILGATE_SPEECH_BREAKER_FAILURES: integer(
      "an integer from 0 to 1000",
      0,
      1000,
    )(SPEECH_ROUTING_DEFAULTS.breakerFailures),
    RAILGATE_SPEECH_BREAKER_COOLDOWN_MS: millis(SPEECH_ROUTING_DEFAULTS.breakerCooldownMs),
    RAILGATE_SPEECH_RETRIES: integer(
      "an integer from 0 to 10",
      0,
      10,
    )(SPEECH_ROUTING_DEFAULTS.retries),
    RAILGATE_SPEECH_RETRY_BACKOFF_MS: millis(SPEECH_ROUTING_DEFAULTS.retryBackoffMs),
    RAILGATE_SPEECH_RETRY_BACKOFF_MAX_MS: millis(SPEECH_ROUTING_DEFAULTS.retryBackoffMaxMs),
    RAILGATE_GRPC_TLS_CERT: text(undefined),
    RAILGATE_GRPC_TLS_KEY: text(undefined),
    RAILGATE_GRPC_TLS_CA: text(undefined),
    RAILGATE_MAX_BODY_BYTES: bytes(1_048_576),
    // 15 MiB of reference audio (OpenRouter's limit) is 20 MiB as base64; 1 MiB for the rest.
    RAILGATE_SPEECH_MAX_BODY_BYTES: bytes(21 * 1_048_576),
    // OpenRouter's default; OpenAI's is mp3, which its SDKs' users expect when they name none.
    RAILGATE_SPEECH_DEFAULT_FORMAT: oneOf(AUDIO_FORMAT_NAMES, "pcm"),
    RAILGATE_SPEECH_ENGINE_WORKERS: integer("an integer from 1 to 256", 1, 256)(undefined),
    RAILGATE_SPEECH_CATALOG_FILE: text(undefined),
    RAILGATE_EMBEDDED_ENGINE: oneOf(["auto", "off"] as const, "auto"),
    RAILGATE_CONFIG_REFILL: oneOf(["on", "off"] as const, "on"),
    OPENAI_API_KEY: text(undefined),
    OPENAI_BASE_URL: url(["http:", "https:"], "an http(s):// URL"),
    RAILGATE_RATE_LIMIT_PER_MINUTE: zeroOrMore(600),
    RAILGATE_AUDIO_CACHE_WORKSPACE_BYTES: bytes(AUDIO_CACHE_DEFAULTS.workspaceBytes),
    RAILGATE_AUDIO_CACHE_MEMORY_BYTES: bytes(AUDIO_CACHE_DEFAULTS.memoryBytes),
    RAILGATE_AUDIO_CACHE_PRICE_RATIO: fraction(AUDIO_CACHE_DEFAULTS.priceRatio),
    RAILGATE_AUDIO_CACHE_TTL_SECONDS: integer(
      "an integer number of seconds from 1 to 2592000",
      1,
      2_592_000,
    )(AUDIO_CACHE_DEFAULTS.ttlSeconds),
    RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE: boolean(true),
    RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER: boolean(true),
    ...loggingFields,
    RAILGATE_SHUTDOWN_GRACE_MS: integer(
      "an integer number of milliseconds >= 0",
      0,
      3600 * 1000,
    )(25_000),
    RAILGATE_STORE_RETRY_QUEUE_MAX: count(10_000),
    RAILGATE_RECOVERY_BOUND_MS: integer(
      "an integer number of milliseconds from 1000 to 3600000",
      1000,
      3_600_000,
    )(30_000),
    RAILGATE_RECOVERY_CHECKPOINT_MS: integer(
      "an integer number of milliseconds from 100 to 60000",
      100,
      60_000,
    )(1000),
    DATABASE_URL: url(["postgres:", "postgresql:"], "a postgres:// or postgresql:// URL"),
    RAILGATE_DATABASE_POOL_MAX: integer("an integer from 1 to 1000", 1, 1000)(10),
    RAILGATE_DATA_DIR: text("./data"),
    RAILGATE_REQUEST_LOG_RETENTION_DAYS: integer(
      "an integer number of days from 1 to 3650",
      1,
      3650,
    )(30),
    RAILGATE_REQUEST_LOG_QUEUE_MAX: count(100_000),
    RAILGATE_AUDIT_LOG_RETENTION_DAYS: integer(
      "an integer number of days from 1 to 3650",
      1,
      3650,
    )(365),
    RAILGATE_REPLAY_DATA_KEY: aes256Key,
    RAILGATE_HTTP_HEADERS_TIMEOUT_MS: millis(10_000),
    // Long enough to receive a 21 MiB speech body over a slow link (~1 Mbit/s), but bounded.
    RAILGATE_HTTP_REQUEST_TIMEOUT_MS: millis(180_000),
    // Outlives the 60 s idle time-out of common load balancers, so they never reuse a closed socket.
    RAILGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS: millis(65_000),
    RAILGATE_HTTP_MAX_CONNECTIONS: count(1_000),
    // A fifth of the listener's cap: one address can never hold the listener alone. 0 = off,
    // for deployments behind a load balancer or proxy, where every client shares its address.
    RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS: zeroOrMore(200),
    RAILGATE_CORS_ORIGINS: corsOrigins,
    // The OpenTelemetry SDK's standard names. Unset exporter: "otlp" when an endpoint is set.
    OTEL_TRACES_EXPORTER: oneOf(["otlp", "none"] as const, undefined),
    OTEL_EXPORTER_OTLP_ENDPOINT: url(["http:", "https:"], "an http(s):// URL"),
    OTEL_SERVICE_NAME: text("railgate"),
    // Probes come every few seconds from each load balancer: their spans would bury the requests'.
    RAILGATE_TRACE_HEALTH_PROBES: boolean(false),
    RAILGATE_WEBHOOK_TIMEOUT_MS: millis(10_000),
    RAILGATE_WEBHOOK_MAX_AGE_MS: millis(24 * 3600 * 1000),
    RAILGATE_WEBHOOK_BACKOFF_BASE_MS: millis(10_000),
    RAILGATE_WEBHOOK_BACKOFF_MAX_MS: millis(3600 * 1000),
    RAILGATE_WEBHOOK_WORKER_INTERVAL_MS: millis(1_000),
    RAILGATE_WEBHOOK_CONCURRENCY: integer("an integer from 1 to 256", 1, 256)(8),
    RAILGATE_WEBHOOK_SHADOW_SWEEP_MS: millis(60_000),
  })
  .superRefine((e, ctx) => {
    if (e.REDIS_URL && e.RAILGATE_REDIS_CLUSTER_NODES) {
      ctx.addIssue({
        code: "custom",
        path: ["RAILGATE_REDIS_CLUSTER_NODES"],
        message: "cannot be set together with REDIS_URL: choose one",
      });
    }
    if (e.RAILGATE_STORE === "embedded" && (e.REDIS_URL || e.RAILGATE_REDIS_CLUSTER_NODES)) {
      // Two settings that contradict each other: which one the operator meant is not ours to guess.
      ctx.addIssue({
        code: "custom",
        path: ["RAILGATE_STORE"],
        message: `is "embedded" but ${e.REDIS_URL ? "REDIS_URL" : "RAILGATE_REDIS_CLUSTER_NODES"} is set: unset one of them`,
      });
    }
    const tls = [e.RAILGATE_GRPC_TLS_CERT, e.RAILGATE_GRPC_TLS_KEY, e.RAILGATE_GRPC_TLS_CA];
    if (tls.some(Boolean) && !tls.every(Boolean)) {
      ctx.addIssue({
        code: "custom",
        path: ["RAILGATE_GRPC_TLS_CERT"],
        message:
          "RAILGATE_GRPC_TLS_CERT, RAILGATE_GRPC_TLS_KEY and RAILGATE_GRPC_TLS_CA must be set together",
      });
    }
    if (e.RAILGATE_WEBHOOK_BACKOFF_BASE_MS > e.RAILGATE_WEBHOOK_BACKOFF_MAX_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["RAILGATE_WEBHOOK_BACKOFF_BASE_MS"],
        message: `must not exceed RAILGATE_WEBHOOK_BACKOFF_MAX_MS (${e.RAILGATE_WEBHOOK_BACKOFF_MAX_MS})`,
      });
    }
    if (e.RAILGATE_HTTP_HEADERS_TIMEOUT_MS > e.RAILGATE_HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["RAILGATE_HTTP_HEADERS_TIMEOUT_MS"],
        message: `must not exceed RAILGATE_HTTP_REQUEST_TIMEOUT_MS (${e.RAILGATE_HTTP_REQUEST_TIMEOUT_MS})`,
      });
    }
  });

export type LoggingSettings = Pick<RailgateConfig, "logLevel" | "logFormat">;

/**
 * RAILGATE_LOG_LEVEL and RAILGATE_LOG_FORMAT as the schema reads them, for the logger, which exists before the
 * configuration is loaded (every module logs through it): a value the schema refuses gives
 * the schema's default here, and loadConfig refuses it at start-up with the usual message.
 */
export function loggingSettings(env: NodeJS.ProcessEnv): LoggingSettings {
  // Each on its own: a bad RAILGATE_LOG_FORMAT must not cost a good RAILGATE_LOG_LEVEL.
  const defaults = z.object(loggingFields).parse({});
  const current = withCurrentNames(env);
  const level = loggingFields.RAILGATE_LOG_LEVEL.safeParse(current.RAILGATE_LOG_LEVEL);
  const format = loggingFields.RAILGATE_LOG_FORMAT.safeParse(current.RAILGATE_LOG_FORMAT);
  return {
    logLevel: level.success ? level.data : defaults.RAILGATE_LOG_LEVEL,
    logFormat: format.success ? format.data : defaults.RAILGATE_LOG_FORMAT,
  };
}

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RailgateConfig {
  const parsed = configSchema.safeParse(withCurrentNames(env));
  if (!parsed.success) {
    // A bad value read under an old name is reported under the name the operator wrote.
    const writtenAs = new Map(
      deprecatedVariables(env)
        .filter((d) => !d.ignored)
        .map((d) => [d.replacement, `${d.name} (now ${d.replacement})`]),
    );
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = issue.path.join(".");
        return `${writtenAs.get(name) ?? name} ${issue.message}`;
      }),
    );
  }
  const e = parsed.data;
  return {
    host: e.RAILGATE_HOST,
    gatewayPorts: {
      global: e.RAILGATE_GATEWAY_PORT,
      europe: e.RAILGATE_GATEWAY_EU_PORT,
      us: e.RAILGATE_GATEWAY_US_PORT,
    },
    guardrailGrpcPort: e.RAILGATE_GUARDRAIL_GRPC_PORT,
    grpcHost: e.RAILGATE_GRPC_HOST,
    metricsPort: e.RAILGATE_METRICS_PORT,
    speechGrpcPort: e.RAILGATE_SPEECH_GRPC_PORT,
    guardrailGrpcUrl: e.RAILGATE_GUARDRAIL_GRPC_URL,
    speechGrpcUrl: e.RAILGATE_SPEECH_GRPC_URL,
    store: e.RAILGATE_STORE,
    cli: { url: e.RAILGATE_URL ?? "http://127.0.0.1:8080", transport: e.RAILGATE_TRANSPORT },
    redisUrl: e.REDIS_URL,
    redisClusterNodes: e.RAILGATE_REDIS_CLUSTER_NODES,
    redisPrefix: e.RAILGATE_REDIS_PREFIX,
    redisCommandTimeoutMs: e.RAILGATE_REDIS_COMMAND_TIMEOUT_MS,
    redisConnectTimeoutMs: e.RAILGATE_REDIS_CONNECT_TIMEOUT_MS,
    managementKey: e.RAILGATE_MANAGEMENT_KEY,
    internalToken: e.RAILGATE_INTERNAL_TOKEN,
    grpcRegion: e.RAILGATE_GRPC_REGION,
    internalTransport: e.RAILGATE_INTERNAL_TRANSPORT,
    grpcUnaryTimeoutMs: e.RAILGATE_GRPC_UNARY_TIMEOUT_MS,
    grpcClient: {
      pingIntervalMs: e.RAILGATE_GRPC_PING_INTERVAL_MS,
      pingTimeoutMs: e.RAILGATE_GRPC_PING_TIMEOUT_MS,
      connectTimeoutMs: e.RAILGATE_GRPC_CONNECT_TIMEOUT_MS,
      connectionsPerAddress: e.RAILGATE_GRPC_CONNECTIONS_PER_ADDRESS,
    },
    speechStream: {
      firstMessageTimeoutMs: e.RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS,
      idleTimeoutMs: e.RAILGATE_SPEECH_IDLE_TIMEOUT_MS,
    },
    speechRouting: {
      breakerFailures: e.RAILGATE_SPEECH_BREAKER_FAILURES,
      breakerCooldownMs: e.RAILGATE_SPEECH_BREAKER_COOLDOWN_MS,
      retries: e.RAILGATE_SPEECH_RETRIES,
      retryBackoffMs: e.RAILGATE_SPEECH_RETRY_BACKOFF_MS,
      retryBackoffMaxMs: e.RAILGATE_SPEECH_RETRY_BACKOFF_MAX_MS,
      firstByteDeadlineMs: e.RAILGATE_SPEECH_FIRST_MESSAGE_TIMEOUT_MS,
    },
    grpcTls:
      e.RAILGATE_GRPC_TLS_CERT && e.RAILGATE_GRPC_TLS_KEY && e.RAILGATE_GRPC_TLS_CA
        ? {
            certFile: e.RAILGATE_GRPC_TLS_CERT,
            keyFile: e.RAILGATE_GRPC_TLS_KEY,
            caFile: e.RAILGATE_GRPC_TLS_CA,
          }
        : undefined,
    maxBodyBytes: e.RAILGATE_MAX_BODY_BYTES,
    maxSpeechBodyBytes: e.RAILGATE_SPEECH_MAX_BODY_BYTES,
    speechDefaultFormat: e.RAILGATE_SPEECH_DEFAULT_FORMAT,
    enginePoolSize: e.RAILGATE_SPEECH_ENGINE_WORKERS,
    catalog: {
      file: e.RAILGATE_SPEECH_CATALOG_FILE,
      openAi: e.OPENAI_API_KEY ? { baseUrl: e.OPENAI_BASE_URL } : undefined,
    },
    embeddedEngine: e.RAILGATE_EMBEDDED_ENGINE,
    configRefill: e.RAILGATE_CONFIG_REFILL,
    rateLimitPerMinute: e.RAILGATE_RATE_LIMIT_PER_MINUTE,
    audioCache: {
      workspaceBytes: e.RAILGATE_AUDIO_CACHE_WORKSPACE_BYTES,
      memoryBytes: e.RAILGATE_AUDIO_CACHE_MEMORY_BYTES,
      priceRatio: e.RAILGATE_AUDIO_CACHE_PRICE_RATIO,
      ttlSeconds: e.RAILGATE_AUDIO_CACHE_TTL_SECONDS,
    },
    allowSafetyRetentionGoogle: e.RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE,
    allowSafetyRetentionOther: e.RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER,
    logLevel: e.RAILGATE_LOG_LEVEL,
    logFormat: e.RAILGATE_LOG_FORMAT,
    shutdownGraceMs: e.RAILGATE_SHUTDOWN_GRACE_MS,
    retryQueueMax: e.RAILGATE_STORE_RETRY_QUEUE_MAX,
    recovery: {
      boundMs: e.RAILGATE_RECOVERY_BOUND_MS,
      checkpointMs: e.RAILGATE_RECOVERY_CHECKPOINT_MS,
    },
    databaseUrl: e.DATABASE_URL,
    databasePoolMax: e.RAILGATE_DATABASE_POOL_MAX,
    dataDir: e.RAILGATE_DATA_DIR,
    logRetentionDays: e.RAILGATE_REQUEST_LOG_RETENTION_DAYS,
    requestLogQueueMax: e.RAILGATE_REQUEST_LOG_QUEUE_MAX,
    auditRetentionDays: e.RAILGATE_AUDIT_LOG_RETENTION_DAYS,
    replayDataKey: e.RAILGATE_REPLAY_DATA_KEY,
    http: {
      headersTimeoutMs: e.RAILGATE_HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.RAILGATE_HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.RAILGATE_HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.RAILGATE_HTTP_MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.RAILGATE_HTTP_MAX_CONNECTIONS_PER_ADDRESS,
    },
    corsOrigins: e.RAILGATE_CORS_ORIGINS,
    webhooks: {
      timeoutMs: e.RAILGATE_WEBHOOK_TIMEOUT_MS,
      maxAgeMs: e.RAILGATE_WEBHOOK_MAX_AGE_MS,
      backoffBaseMs: e.RAILGATE_WEBHOOK_BACKOFF_BASE_MS,
      backoffMaxMs: e.RAILGATE_WEBHOOK_BACKOFF_MAX_MS,
      workerIntervalMs: e.RAILGATE_WEBHOOK_WORKER_INTERVAL_MS,
      concurrency: e.RAILGATE_WEBHOOK_CONCURRENCY,
      shadowSweepIntervalMs: e.RAILGATE_WEBHOOK_SHADOW_SWEEP_MS,
    },
    tracing: {
      exporter: e.OTEL_TRACES_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? "otlp" : "none"),
      endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
      healthProbes: e.RAILGATE_TRACE_HEALTH_PROBES,
    },
    env,
  };
}

/**
 * What the schema gives when nothing is set: every option a caller may leave out (a test's
 * server, a bench) falls back to these, so a default is written once, in the schema above.
 */
export const CONFIG_DEFAULTS: RailgateConfig = loadConfig({});

/** A Redis or PostgreSQL URL fit for a log line: the password (and user name) replaced by "***". */
export function redactUrl(value: string): string {
  try {
    const u = new URL(value);
    if (u.password) u.password = "***";
    if (u.username) u.username = "***";
    return u.toString();
  } catch {
    return "(unparseable URL)";
  }
}
