import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";
import { CALLER_HEADERS } from "../platform/auth/caller-headers.js";
import { createGrpcJsTransport } from "../platform/grpc-js-transport.js";
import { GRPC_MAX_MESSAGE_BYTES } from "../platform/grpc-server.js";
import type { GrpcTls } from "../platform/grpc-tls.js";

export interface ServiceClients {
  guardrails: Client<typeof GuardrailService>;
  accounts: Client<typeof AccountService>;
  speech: Client<typeof SpeechService>;
  /** grpc.health.v1.Health of each service process (what /healthz asks). */
  health: { guardrail: Client<typeof Health>; speech: Client<typeof Health> };
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

/** Typed clients over the given transports: gRPC to other processes, or in-process. */
export function createServiceClients(transports: {
  guardrail: Transport;
  speech: Transport;
}): ServiceClients {
  return {
    guardrails: createClient(GuardrailService, transports.guardrail),
    accounts: createClient(AccountService, transports.guardrail),
    speech: createClient(SpeechService, transports.speech),
    health: {
      guardrail: createClient(Health, transports.guardrail),
      speech: createClient(Health, transports.speech),
    },
  };
}

/**
 * Deadline of a unary call to a service in another process when the caller set
 * none (RAILGATE_GRPC_UNARY_TIMEOUT_MS): a service that hangs costs the client
 * a 524 after this long instead of a request that never ends. Speech streams
 * have none: they last as long as the audio.
 */
export const DEFAULT_GRPC_UNARY_TIMEOUT_MS = 10_000;

/**
 * Real gRPC (HTTP/2) transports to services in other processes (a split
 * deployment), over @grpc/grpc-js: measured in bench/grpc-hop.ts, it costs the
 * gateway about 40% less CPU per speech stream and half per unary call than
 * Connect's own gRPC transport, with the same typed clients and interceptors.
 */
export function grpcTransports(
  urls: { guardrail: string; speech: string },
  credential: ServiceCredential,
  unaryTimeoutMs = DEFAULT_GRPC_UNARY_TIMEOUT_MS,
): { guardrail: Transport; speech: Transport } {
  const interceptors = credential.internalToken
    ? [serviceCredential(credential.internalToken)]
    : [];
  // No compression (grpc-js sends none unless asked): the services are near,
  // and audio does not compress. Message limits as the servers': an oversized
  // message is refused here (413) before it reaches the shared connection.
  const transport = (baseUrl: string) =>
    createGrpcJsTransport({
      baseUrl,
      tls: credential.tls,
      interceptors,
      maxMessageBytes: GRPC_MAX_MESSAGE_BYTES,
      defaultUnaryTimeoutMs: unaryTimeoutMs,
    });
  return { guardrail: transport(urls.guardrail), speech: transport(urls.speech) };
}
