/** The gateway alone, calling services at GUARDRAIL_GRPC_URL and SPEECH_GRPC_URL. */
import { loadConfig } from "../services/common/config.js";
import { runUntilSignal } from "../services/common/lifecycle.js";
import { startGateway } from "./app.js";
import { createServiceClients } from "./clients.js";

await runUntilSignal("gateway", async () => {
  const config = loadConfig();
  // Without the service credential the services would take every client to be in
  // their own listener's region: a gateway on its own must have it.
  if (!config.internalToken) {
    throw new Error(
      "RAILGATE_INTERNAL_TOKEN is required when the gateway runs on its own (the same value as the services')",
    );
  }
  const clients = createServiceClients(
    {
      guardrail: process.env.GUARDRAIL_GRPC_URL || `http://127.0.0.1:${config.guardrailGrpcPort}`,
      speech: process.env.SPEECH_GRPC_URL || `http://127.0.0.1:${config.speechGrpcPort}`,
    },
    config.internalToken,
  );
  return startGateway(config.gatewayPorts, config.host, {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
  });
});
