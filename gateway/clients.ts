import type { Client, Interceptor, Transport } from "@connectrpc/connect";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailPolicyService } from "../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";
import { WebhookService } from "../gen/railgate/webhook/v1/webhook_service_pb.js";
import { CALLER_HEADERS } from "../platform/auth/caller-headers.js";
import { CONFIG_DEFAULTS } from "../platform/config/config.js";
import { grpcClientMetricsInterceptor } from "../platform/observability/grpc-metrics.js";
import { GRPC_MAX_MESSAGE_BYTES } from "../platform/rpc/grpc-server.js";
import type { GrpcTls } from "../platform/rpc/grpc-tls.js";
import type { Http2PoolOptions } from "../platform/rpc/http2-grpc-pool.js";
import {
  createHttp2GrpcTransport,
  type Http2GrpcTransport,
} from "../platform/rpc/http2-grpc-transport.js";
import { createTypedClient } from "../platform/rpc/typed-client.js";

export interface ServiceClients {
  guardrails: Client<typeof GuardrailService>;
  accounts: Client<typeof AccountService>;
  /** Guardrail policies: served beside GuardrailService (the guardrail process). */
  policies: Client<typeof GuardrailPolicyService>;
  speech: Client<typeof SpeechService>;
  /** Budget-alert webhooks: served beside AccountService (the guardrail process). */
  webhooks: Client<typeof WebhookService>;
  /** grpc.health.v1.Health of each service (what /healthz asks). */
  health: { guardrail: ServiceHealth; speech: ServiceHealth };
}

/**
 * One service's health client, and over how many distinct connections (replicas, addresses) a
 * check can be asked: ON_CONNECTION 0..paths()-1 (platform/rpc/http2-grpc-transport.ts). In process,
 * one.
 */
export interface ServiceHealth {
  client: Client<typeof Health>;
  paths(): number;
}

function healthOf(transport: Transport): ServiceHealth {
  const spread = transport as Partial<Http2GrpcTransport>;
  return {
    client: createTypedClient(Health, transport),
    paths: () => spread.paths?.() ?? 1,
  };
}

export interface ServiceCredential {
  /** RAILGATE_INTERNAL_TOKEN, sent on every call. */
  internalToken?: string;
  /** mTLS: the gateway's client certificate and the CA of the services' certificates (https URLs). */
  tls?: GrpcTls;
}

/**
 * Every call of the gateway proves it comes from a Railgate gateway, which is
 * what lets it assert its client's ingress region (the services refuse that
 * assertion from anyone else). The client's own key travels per call.
 */
export function serviceCredential(internalToken: string): Interceptor {
  return (next) => (req) => {
    req.header.set(CALLER_HEADERS.internalToken, internalToken);
    return next(req);
  };
}

/**
 * Typed clients over the given transports: gRPC to other processes, or in-process (Connect's
 * clients, with server streams handed through as the transport yields them: typed-client.ts).
 */
export function createServiceClients(transports: {
  guardrail: Transport;
  speech: Transport;
}): ServiceClients {
  return {
    guardrails: createTypedClient(GuardrailService, transports.guardrail),
    accounts: createTypedClient(AccountService, transports.guardrail),
    policies: createTypedClient(GuardrailPolicyService, transports.guardrail),
    speech: createTypedClient(SpeechService, transports.speech),
    webhooks: createTypedClient(WebhookService, transports.guardrail),
    health: { guardrail: healthOf(transports.guardrail), speech: healthOf(transports.speech) },
  };
}

/**
 * `unaryTimeoutMs` (RAILGATE_GRPC_UNARY_TIMEOUT_MS, default in platform/config/config.ts) is the deadline
 * of a unary call whose caller set none: a service that hangs costs the client a 524 after this
 * long instead of a request that never ends. Speech streams have none (they last as long as
 * the audio): the gateway bounds the wait for their first message and between messages instead
 * (gateway/speech-stream.ts). `pool` (RAILGATE_GRPC_PING_*, ...) is how a dead or frozen replica
 * is left and how calls spread over connections (platform/rpc/http2-grpc-pool.ts).
 */
/**
 * Real gRPC (HTTP/2) transports to services in other processes (a split
 * deployment), straight over node:http2 (platform/rpc/http2-grpc-transport.ts, the
 * client side of the services' grpc-direct.ts): the same typed clients and
 * interceptors as Connect's gRPC transport at a fraction of its CPU, and less
 * than grpc-js's (measured in bench/grpc-hop.ts).
 */
export function grpcTransports(
  urls: { guardrail: string; speech: string },
  credential: ServiceCredential,
  unaryTimeoutMs = CONFIG_DEFAULTS.grpcUnaryTimeoutMs,
  pool: Http2PoolOptions = CONFIG_DEFAULTS.grpcClient,
): { guardrail: Http2GrpcTransport; speech: Http2GrpcTransport } {
  // Timed outermost: the duration is the whole call as the gateway's handler waits for it.
  const interceptors = credential.internalToken
    ? [grpcClientMetricsInterceptor, serviceCredential(credential.internalToken)]
    : [grpcClientMetricsInterceptor];
  // No compression (none is offered): the services are near,
  // and audio does not compress. Message limits as the servers': an oversized
  // message is refused here (413) before it reaches the shared connection.
  const transport = (baseUrl: string) =>
    createHttp2GrpcTransport({
      baseUrl,
      tls: credential.tls,
      interceptors,
      maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
      defaultUnaryTimeoutMs: unaryTimeoutMs,
      pool,
    });
  return { guardrail: transport(urls.guardrail), speech: transport(urls.speech) };
}
