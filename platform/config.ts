import { z } from "zod";
import type { GrpcTlsFiles } from "./grpc-tls.js";
import { REGION_NAMES, type RegionName } from "./regions.js";

/**
 * Process configuration: every environment variable the services, the gateway
 * and the CLI read, parsed and validated by one schema at start-up. A bad
 * value refuses start-up with a message naming the variable, the rule and
 * what it got, instead of quietly becoming NaN or a default.
 */
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
  /** Unset: try redis://127.0.0.1:6379 and fall back to the embedded store. */
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
  /** Worker threads of the embedded speech engine; unset = one per core. */
  enginePoolSize?: number;
  /** "auto": the embedded engine when its package is installed; "off": never. */
  embeddedEngine: "auto" | "off";
  /** Requests per minute per key unless the key sets its own; 0 = unlimited. */
  rateLimitPerMinute: number;
  /** The account's safety-retention settings (ACCOUNT_ALLOW_SAFETY_RETENTION_*). */
  allowSafetyRetentionGoogle: boolean;
  allowSafetyRetentionOther: boolean;
  logLevel: string;
  /** json (default) or pretty (pino-pretty, for a human at a terminal). */
  logFormat: "json" | "pretty";
  /** On SIGTERM, how long in-flight requests (speech streams) may take to finish. */
  shutdownGraceMs: number;
  /** Settlements and generation records kept for retry while the store is down. */
  retryQueueMax: number;
  /** Per gateway listener: node:http time-outs and a connection cap. */
  http: {
    headersTimeoutMs: number;
    requestTimeoutMs: number;
    keepAliveTimeoutMs: number;
    maxConnections: number;
  };
  /** Browser origins allowed to call the API (CORS_ORIGINS); "*" = any; empty = no CORS at all. */
  corsOrigins: string[];
  /** OpenTelemetry traces (OTEL_*): exported over OTLP/HTTP only when configured. */
  tracing: { exporter: "otlp" | "none"; endpoint?: string; serviceName: string };
  /** The environment the services read provider keys and the catalog path from. */
  env: NodeJS.ProcessEnv;
}

/** Thrown when the environment holds a value the schema refuses; lists every problem. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join("\n  - ")}`);
    this.name = "ConfigError";
  }
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

/** The one schema: environment variable name -> parsed value. */
export const configSchema = z
  .object({
    GATEWAY_PORT: port(8080),
    GATEWAY_EU_PORT: port(8081),
    GATEWAY_US_PORT: port(8082),
    RAILGATE_HOST: text("0.0.0.0"),
    GUARDRAIL_GRPC_PORT: port(50051),
    SPEECH_GRPC_PORT: port(50052),
    RAILGATE_GRPC_HOST: text("127.0.0.1"),
    METRICS_PORT: port(undefined),
    GUARDRAIL_GRPC_URL: url(["http:", "https:"], "an http(s):// URL"),
    SPEECH_GRPC_URL: url(["http:", "https:"], "an http(s):// URL"),
    REDIS_URL: url(["redis:", "rediss:"], "a redis:// or rediss:// URL"),
    REDIS_CLUSTER_NODES: clusterNodes,
    REDIS_PREFIX: text("rg"),
    REDIS_COMMAND_TIMEOUT_MS: millis(1000),
    REDIS_CONNECT_TIMEOUT_MS: millis(2000),
    RAILGATE_MANAGEMENT_KEY: secret(32),
    RAILGATE_INTERNAL_TOKEN: secret(32),
    RAILGATE_GRPC_REGION: oneOf(REGION_NAMES, "global"),
    RAILGATE_INTERNAL_TRANSPORT: oneOf(["in-process", "grpc"] as const, "in-process"),
    RAILGATE_GRPC_UNARY_TIMEOUT_MS: millis(10_000),
    RAILGATE_GRPC_TLS_CERT: text(undefined),
    RAILGATE_GRPC_TLS_KEY: text(undefined),
    RAILGATE_GRPC_TLS_CA: text(undefined),
    MAX_BODY_BYTES: bytes(1_048_576),
    SPEECH_MAX_BODY_BYTES: bytes(16 * 1_048_576),
    SPEECH_ENGINE_WORKERS: integer("an integer from 1 to 256", 1, 256)(undefined),
    SPEECH_CATALOG_FILE: text(undefined),
    RAILGATE_EMBEDDED_ENGINE: oneOf(["auto", "off"] as const, "auto"),
    OPENAI_API_KEY: text(undefined),
    OPENAI_BASE_URL: url(["http:", "https:"], "an http(s):// URL"),
    RATE_LIMIT_PER_MINUTE: zeroOrMore(600),
    ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE: boolean(true),
    ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER: boolean(true),
    LOG_LEVEL: oneOf(LOG_LEVELS, "info"),
    // Read by platform/logger.ts at import; validated here so a typo is refused.
    LOG_FORMAT: oneOf(["json", "pretty"] as const, "json"),
    SHUTDOWN_GRACE_MS: integer("an integer number of milliseconds >= 0", 0, 3600 * 1000)(25_000),
    STORE_RETRY_QUEUE_MAX: count(10_000),
    HTTP_HEADERS_TIMEOUT_MS: millis(10_000),
    // Long enough to receive a 16 MiB speech body over a slow link, but bounded.
    HTTP_REQUEST_TIMEOUT_MS: millis(120_000),
    // Outlives the 60 s idle time-out of common load balancers, so they never reuse a closed socket.
    HTTP_KEEP_ALIVE_TIMEOUT_MS: millis(65_000),
    HTTP_MAX_CONNECTIONS: count(1_000),
    CORS_ORIGINS: corsOrigins,
    // The OpenTelemetry SDK's standard names. Unset exporter: "otlp" when an endpoint is set.
    OTEL_TRACES_EXPORTER: oneOf(["otlp", "none"] as const, undefined),
    OTEL_EXPORTER_OTLP_ENDPOINT: url(["http:", "https:"], "an http(s):// URL"),
    OTEL_SERVICE_NAME: text("railgate"),
  })
  .superRefine((e, ctx) => {
    if (e.REDIS_URL && e.REDIS_CLUSTER_NODES) {
      ctx.addIssue({
        code: "custom",
        path: ["REDIS_CLUSTER_NODES"],
        message: "cannot be set together with REDIS_URL: choose one",
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
    if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
      ctx.addIssue({
        code: "custom",
        path: ["HTTP_HEADERS_TIMEOUT_MS"],
        message: `must not exceed HTTP_REQUEST_TIMEOUT_MS (${e.HTTP_REQUEST_TIMEOUT_MS})`,
      });
    }
  });

/** Reads and validates the environment; throws ConfigError naming every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RailgateConfig {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => `${issue.path.join(".")} ${issue.message}`),
    );
  }
  const e = parsed.data;
  return {
    host: e.RAILGATE_HOST,
    gatewayPorts: { global: e.GATEWAY_PORT, europe: e.GATEWAY_EU_PORT, us: e.GATEWAY_US_PORT },
    guardrailGrpcPort: e.GUARDRAIL_GRPC_PORT,
    grpcHost: e.RAILGATE_GRPC_HOST,
    metricsPort: e.METRICS_PORT,
    speechGrpcPort: e.SPEECH_GRPC_PORT,
    guardrailGrpcUrl: e.GUARDRAIL_GRPC_URL,
    speechGrpcUrl: e.SPEECH_GRPC_URL,
    redisUrl: e.REDIS_URL,
    redisClusterNodes: e.REDIS_CLUSTER_NODES,
    redisPrefix: e.REDIS_PREFIX,
    redisCommandTimeoutMs: e.REDIS_COMMAND_TIMEOUT_MS,
    redisConnectTimeoutMs: e.REDIS_CONNECT_TIMEOUT_MS,
    managementKey: e.RAILGATE_MANAGEMENT_KEY,
    internalToken: e.RAILGATE_INTERNAL_TOKEN,
    grpcRegion: e.RAILGATE_GRPC_REGION,
    internalTransport: e.RAILGATE_INTERNAL_TRANSPORT,
    grpcUnaryTimeoutMs: e.RAILGATE_GRPC_UNARY_TIMEOUT_MS,
    grpcTls:
      e.RAILGATE_GRPC_TLS_CERT && e.RAILGATE_GRPC_TLS_KEY && e.RAILGATE_GRPC_TLS_CA
        ? {
            certFile: e.RAILGATE_GRPC_TLS_CERT,
            keyFile: e.RAILGATE_GRPC_TLS_KEY,
            caFile: e.RAILGATE_GRPC_TLS_CA,
          }
        : undefined,
    maxBodyBytes: e.MAX_BODY_BYTES,
    maxSpeechBodyBytes: e.SPEECH_MAX_BODY_BYTES,
    enginePoolSize: e.SPEECH_ENGINE_WORKERS,
    embeddedEngine: e.RAILGATE_EMBEDDED_ENGINE,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    allowSafetyRetentionGoogle: e.ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE,
    allowSafetyRetentionOther: e.ACCOUNT_ALLOW_SAFETY_RETENTION_OTHER,
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    retryQueueMax: e.STORE_RETRY_QUEUE_MAX,
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    corsOrigins: e.CORS_ORIGINS,
    tracing: {
      exporter: e.OTEL_TRACES_EXPORTER ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? "otlp" : "none"),
      endpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
      serviceName: e.OTEL_SERVICE_NAME,
    },
    env,
  };
}

/** A Redis URL fit for a log line: the password (and user name) replaced by "***". */
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
