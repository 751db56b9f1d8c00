import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health } from "../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";

export interface ServiceClients {
  guardrails: Client<typeof GuardrailService>;
  accounts: Client<typeof AccountService>;
  speech: Client<typeof SpeechService>;
  /** grpc.health.v1.Health of each service process (what /healthz asks). */
  health: { guardrail: Client<typeof Health>; speech: Client<typeof Health> };
}

/** The gateway reaches every service over real gRPC, as any other internal caller would. */
export function createServiceClients(urls: { guardrail: string; speech: string }): ServiceClients {
  // No compression: the services are near, and audio does not compress.
  const guardrailTransport = createGrpcTransport({
    baseUrl: urls.guardrail,
    acceptCompression: [],
  });
  const speechTransport = createGrpcTransport({ baseUrl: urls.speech, acceptCompression: [] });
  return {
    guardrails: createClient(GuardrailService, guardrailTransport),
    accounts: createClient(AccountService, guardrailTransport),
    speech: createClient(SpeechService, speechTransport),
    health: {
      guardrail: createClient(Health, guardrailTransport),
      speech: createClient(Health, speechTransport),
    },
  };
}
