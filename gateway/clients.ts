import { type Client, createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";
import { CALLER_HEADERS } from "../services/common/auth/caller-headers.js";
import type { GrpcTls } from "../services/common/grpc-tls.js";

export interface ServiceClients {
  guardrails: Client<typeof GuardrailService>;
  accounts: Client<typeof AccountService>;
  speech: Client<typeof SpeechService>;
}

/**
 * Every call of the gateway proves it comes from a Railgate gateway, which is
 * what lets it assert its client's ingress region (the services refuse that
 * assertion from anyone else). The client's own key travels per call.
 */
function serviceCredential(internalToken: string): Interceptor {
  return (next) => (req) => {
    req.header.set(CALLER_HEADERS.internalToken, internalToken);
    return next(req);
  };
}

export interface ServiceCredential {
  /** RAILGATE_INTERNAL_TOKEN, sent on every call. */
  internalToken?: string;
  /** mTLS: the gateway's client certificate and the CA of the services' certificates (https URLs). */
  tls?: GrpcTls;
}

/** The gateway reaches every service over real gRPC, as any other internal caller would. */
export function createServiceClients(
  urls: { guardrail: string; speech: string },
  credential: ServiceCredential,
): ServiceClients {
  const interceptors = credential.internalToken
    ? [serviceCredential(credential.internalToken)]
    : [];
  const transport = (baseUrl: string) =>
    createGrpcTransport({
      baseUrl,
      // No compression: the services are near, and audio does not compress.
      acceptCompression: [],
      interceptors,
      nodeOptions: credential.tls,
    });
  const guardrailTransport = transport(urls.guardrail);
  const speechTransport = transport(urls.speech);
  return {
    guardrails: createClient(GuardrailService, guardrailTransport),
    accounts: createClient(AccountService, guardrailTransport),
    speech: createClient(SpeechService, speechTransport),
  };
}
