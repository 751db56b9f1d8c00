import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";

export interface CliClients {
  accounts: ReturnType<typeof createClient<typeof AccountService>>;
  guardrails: ReturnType<typeof createClient<typeof GuardrailService>>;
  speech: ReturnType<typeof createClient<typeof SpeechService>>;
}

/**
 * Clients of the two gRPC services, each call carrying the caller's key as a
 * bearer token: the CLI is an ordinary caller and gets no access the key
 * does not give it (a management key for management, a standard key to speak).
 */
export function cliClients(key: string | undefined, env = process.env): CliClients {
  const bearer: Interceptor = (next) => (req) => {
    if (key) req.header.set("authorization", `Bearer ${key}`);
    return next(req);
  };
  const transport = (baseUrl: string) => createGrpcTransport({ baseUrl, interceptors: [bearer] });
  const guardrail = transport(env.GUARDRAIL_GRPC_URL || "http://127.0.0.1:50051");
  return {
    accounts: createClient(AccountService, guardrail),
    guardrails: createClient(GuardrailService, guardrail),
    speech: createClient(SpeechService, transport(env.SPEECH_GRPC_URL || "http://127.0.0.1:50052")),
  };
}
