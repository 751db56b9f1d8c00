import type { GrpcTlsFiles } from "./grpc-tls.js";

/** Process configuration, read once from the environment. */
export interface RailgateConfig {
  host: string;
  gatewayPorts: { global: number; europe: number; us: number };
  guardrailGrpcPort: number;
  /** Where the gRPC services listen: loopback in one process, 0.0.0.0 in containers. */
  grpcHost: string;
  speechGrpcPort: number;
  /** Unset: try redis://127.0.0.1:6379 and fall back to the embedded store. */
  redisUrl?: string;
  /** Comma-separated host:port seeds; when set, a Redis Cluster is used. */
  redisClusterNodes?: string[];
  /** Prefix of every Redis key, so several deployments can share one server. */
  redisPrefix: string;
  managementKey?: string;
  /** The service credential that lets a gateway assert its clients' ingress region. */
  internalToken?: string;
  /** The ingress region of callers that reach the gRPC listeners directly. */
  grpcRegion: "global" | "europe" | "us";
  /**
   * How `npm start`'s gateway reaches the services in its own process:
   * "in-process" (direct calls) or "grpc" (the loopback listeners).
   */
  internalTransport: "in-process" | "grpc";
  /** Development check: freeze messages that cross the in-process transport (tests). */
  freezeInProcessMessages?: boolean;
  /** PEM files for TLS on the internal gRPC hop (mTLS: a gateway's client certificate proves it). */
  grpcTls?: GrpcTlsFiles;
  maxBodyBytes: number;
  maxSpeechBodyBytes: number;
  /** Worker threads of the embedded speech engine; unset = one per core. */
  enginePoolSize?: number;
  logLevel: string;
  /** The environment the services read provider keys and the catalog path from. */
  env: NodeJS.ProcessEnv;
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    throw new Error(`${name} must be a port number 0..65535, got "${raw}"`);
  }
  return n;
}

function grpcRegion(raw: string | undefined): "global" | "europe" | "us" {
  if (raw === undefined || raw === "") return "global";
  if (raw === "global" || raw === "europe" || raw === "us") return raw;
  throw new Error(
    `RAILGATE_GRPC_REGION must be "global", "europe" or "us", got "${raw.slice(0, 40)}"`,
  );
}

function internalTransport(raw: string | undefined): "in-process" | "grpc" {
  if (raw === undefined || raw === "" || raw === "in-process") return "in-process";
  if (raw === "grpc") return raw;
  throw new Error(
    `RAILGATE_INTERNAL_TRANSPORT must be "in-process" or "grpc", got "${raw.slice(0, 40)}"`,
  );
}

function grpcTlsFiles(env: NodeJS.ProcessEnv): GrpcTlsFiles | undefined {
  const names = ["RAILGATE_GRPC_TLS_CERT", "RAILGATE_GRPC_TLS_KEY", "RAILGATE_GRPC_TLS_CA"];
  const set = names.filter((n) => env[n]);
  if (set.length === 0) return undefined;
  if (set.length !== names.length) {
    throw new Error(`${names.join(", ")} must be set together (only ${set.join(", ")} is set)`);
  }
  return {
    certFile: env.RAILGATE_GRPC_TLS_CERT as string,
    keyFile: env.RAILGATE_GRPC_TLS_KEY as string,
    caFile: env.RAILGATE_GRPC_TLS_CA as string,
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): RailgateConfig {
  const cluster = env.REDIS_CLUSTER_NODES?.split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    host: env.RAILGATE_HOST || "0.0.0.0",
    gatewayPorts: {
      global: port(env, "GATEWAY_PORT", 8080),
      europe: port(env, "GATEWAY_EU_PORT", 8081),
      us: port(env, "GATEWAY_US_PORT", 8082),
    },
    guardrailGrpcPort: port(env, "GUARDRAIL_GRPC_PORT", 50051),
    grpcHost: env.RAILGATE_GRPC_HOST || "127.0.0.1",
    speechGrpcPort: port(env, "SPEECH_GRPC_PORT", 50052),
    redisUrl: env.REDIS_URL || undefined,
    redisClusterNodes: cluster && cluster.length > 0 ? cluster : undefined,
    redisPrefix: env.REDIS_PREFIX || "rg",
    managementKey: env.RAILGATE_MANAGEMENT_KEY || undefined,
    internalToken: env.RAILGATE_INTERNAL_TOKEN || undefined,
    grpcRegion: grpcRegion(env.RAILGATE_GRPC_REGION),
    grpcTls: grpcTlsFiles(env),
    internalTransport: internalTransport(env.RAILGATE_INTERNAL_TRANSPORT),
    maxBodyBytes: Number(env.MAX_BODY_BYTES || 1_048_576),
    maxSpeechBodyBytes: Number(env.SPEECH_MAX_BODY_BYTES || 16 * 1_048_576),
    enginePoolSize: env.SPEECH_ENGINE_WORKERS ? Number(env.SPEECH_ENGINE_WORKERS) : undefined,
    logLevel: env.LOG_LEVEL || "info",
    env,
  };
}
