/** The gateway alone, calling services at GUARDRAIL_GRPC_URL and SPEECH_GRPC_URL. */
import { loadConfig } from "../services/common/config.js";
import { runUntilSignal } from "../services/common/lifecycle.js";
import { startGateway } from "./app.js";
import { createServiceClients } from "./clients.js";

await runUntilSignal("gateway", async () => {
  const config = loadConfig();
  const clients = createServiceClients({
    guardrail: process.env.GUARDRAIL_GRPC_URL || `http://127.0.0.1:${config.guardrailGrpcPort}`,
    speech: process.env.SPEECH_GRPC_URL || `http://127.0.0.1:${config.speechGrpcPort}`,
  });
  return startGateway(config.gatewayPorts, config.host, {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
  });
});
