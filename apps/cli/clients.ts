import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailPolicyService } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import type { RailgateConfig } from "../../platform/config/config.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";

export interface CliClients {
  accounts: ReturnType<typeof createClient<typeof AccountService>>;
  guardrails: ReturnType<typeof createClient<typeof GuardrailService>>;
  policies: ReturnType<typeof createClient<typeof GuardrailPolicyService>>;
  speech: ReturnType<typeof createClient<typeof SpeechService>>;
}

/**
 * Clients of the two gRPC services (--grpc), each call carrying the caller's key as a
 * bearer token: the CLI is an ordinary caller and gets no access the key does not give it
 * (a management key for management, a standard key to speak), never the internal token.
 * Where the services are and the hop's mTLS files come from the configuration, as for a
 * gateway (RAILGATE_GUARDRAIL_GRPC_URL, RAILGATE_SPEECH_GRPC_URL, RAILGATE_GRPC_TLS_*).
 */
export function cliClients(key: string | undefined, config: RailgateConfig): CliClients {
  const bearer: Interceptor = (next) => (req) => {
    if (key) req.header.set("authorization", `Bearer ${key}`);
    return next(req);
  };
  const tls = loadGrpcTls(config.grpcTls);
  const scheme = tls ? "https" : "http";
  const transport = (baseUrl: string) =>
    createGrpcTransport({ baseUrl, interceptors: [bearer], nodeOptions: tls });
  const guardrail = transport(
    config.guardrailGrpcUrl ?? `${scheme}://127.0.0.1:${config.guardrailGrpcPort}`,
  );
  return {
    accounts: createClient(AccountService, guardrail),
    guardrails: createClient(GuardrailService, guardrail),
    policies: createClient(GuardrailPolicyService, guardrail),
    speech: createClient(
      SpeechService,
      transport(config.speechGrpcUrl ?? `${scheme}://127.0.0.1:${config.speechGrpcPort}`),
    ),
  };
}
