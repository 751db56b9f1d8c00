import { type Client, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../gen/railgate/speech/v1/speech_service_pb.js";
import { GRPC_MAX_MESSAGE_BYTES } from "../services/common/grpc-server.js";
import { GrpcSessionManager } from "../services/common/grpc-session-manager.js";

export interface ServiceClients {
  guardrails: Client<typeof GuardrailService>;
  accounts: Client<typeof AccountService>;
  speech: Client<typeof SpeechService>;
}

/** The gateway reaches every service over real gRPC, as any other internal caller would. */
export function createServiceClients(urls: { guardrail: string; speech: string }): ServiceClients {
  // No compression: the services are near, and audio does not compress.
  // Message limits as the servers': an oversized message is refused here (413)
  // before it reaches the shared session. A failed session is replaced at once
  // and can never crash the process (see GrpcSessionManager).
  const guardrailTransport = createGrpcTransport({
    baseUrl: urls.guardrail,
    acceptCompression: [],
    sessionManager: new GrpcSessionManager(urls.guardrail),
    readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
    writeMaxBytes: GRPC_MAX_MESSAGE_BYTES,
  });
  const speechTransport = createGrpcTransport({
    baseUrl: urls.speech,
    acceptCompression: [],
    sessionManager: new GrpcSessionManager(urls.speech),
    readMaxBytes: GRPC_MAX_MESSAGE_BYTES,
    writeMaxBytes: GRPC_MAX_MESSAGE_BYTES,
  });
  return {
    guardrails: createClient(GuardrailService, guardrailTransport),
    accounts: createClient(AccountService, guardrailTransport),
    speech: createClient(SpeechService, speechTransport),
  };
}
