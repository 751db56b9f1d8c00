import type { GatewayOptions, HttpLimits } from "../gateway/app.js";
import type { ServiceClients } from "../gateway/clients.js";
import type { RailgateConfig } from "../platform/config/config.js";
import { loadGrpcTls } from "../platform/rpc/grpc-tls.js";
import type { SpeechServerOptions } from "../services/speech/server.js";
import type { GuardrailServerOptions } from "./control-plane/server.js";

/**
 * One builder per server, from the validated configuration: the containers (apps/gateway,
 * apps/control-plane, apps/speech) and `npm start` (apps/all-in-one/system.ts) build their options
 * here, so a setting reaches every server it concerns the same way, and its default is the
 * schema's (platform/config/config.ts). What differs between deployments (the one-process service
 * credential, a test's clock) is added by the caller over these.
 */
export function guardrailServerOptions(config: RailgateConfig): GuardrailServerOptions {
  return {
    managementKey: config.managementKey,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
    catalog: config.catalog,
    account: {
      allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
      allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    },
    rateLimitPerMinute: config.rateLimitPerMinute,
    budgetGaugesTtlMs: config.budgetGaugesTtlMs,
    auditRetentionDays: config.auditRetentionDays,
    logRetentionDays: config.logRetentionDays,
    replayDataKey: config.replayDataKey,
    auditQueueMax: config.requestLogQueueMax,
    configRefill: config.configRefill === "on",
    // Deliveries run on real time (signatures are checked against the receiver's clock).
    webhookDelivery: config.webhooks,
  };
}

/** SpeechService's options; the caller adds the request-log database it opened. */
export function speechServerOptions(config: RailgateConfig): Omit<SpeechServerOptions, "database"> {
  return {
    catalog: config.catalog,
    env: config.env,
    enginePoolSize: config.enginePoolSize,
    embeddedEngine: config.embeddedEngine,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
    rateLimitPerMinute: config.rateLimitPerMinute,
    allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
    allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    retryQueueMax: config.retryQueueMax,
    recovery: config.recovery,
    logRetentionDays: config.logRetentionDays,
    replayDataKey: config.replayDataKey,
    requestLogQueueMax: config.requestLogQueueMax,
    audioCache: config.audioCache,
    routing: config.speechRouting,
  };
}

/** The gateway's options, calling the services through `clients`. */
export function gatewayOptions(
  config: RailgateConfig,
  clients: ServiceClients,
): GatewayOptions & { http: HttpLimits } {
  return {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
    speechDefaultFormat: config.speechDefaultFormat,
    speechStream: config.speechStream,
    http: config.http,
    corsOrigins: config.corsOrigins,
  };
}
