/** The gateway alone, calling services at GUARDRAIL_GRPC_URL and SPEECH_GRPC_URL. */
import { runUntilSignal } from "../services/common/lifecycle.js";
import { startGateway } from "./app.js";
import { createServiceClients } from "./clients.js";

await runUntilSignal("gateway", async (config) => {
  const clients = createServiceClients({
    guardrail: config.guardrailGrpcUrl ?? `http://127.0.0.1:${config.guardrailGrpcPort}`,
    speech: config.speechGrpcUrl ?? `http://127.0.0.1:${config.speechGrpcPort}`,
  });
  return startGateway(config.gatewayPorts, config.host, {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
    http: config.http,
  });
});
