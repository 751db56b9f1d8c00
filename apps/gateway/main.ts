/** The gateway alone, calling services at GUARDRAIL_GRPC_URL and SPEECH_GRPC_URL. */

import { startGateway } from "../../gateway/app.js";
import { createServiceClients, grpcTransports } from "../../gateway/clients.js";
import { loadGrpcTls } from "../../platform/grpc-tls.js";
import { runUntilSignal } from "../../platform/lifecycle.js";

await runUntilSignal("gateway", async (config) => {
  // Without a service credential the services would take every client to be in
  // their own listener's region: a gateway on its own must have one.
  const tls = loadGrpcTls(config.grpcTls);
  if (!config.internalToken && !tls) {
    throw new Error(
      "RAILGATE_INTERNAL_TOKEN (the services' value) or RAILGATE_GRPC_TLS_CERT/_KEY/_CA (mTLS) is required when the gateway runs on its own",
    );
  }
  const scheme = tls ? "https" : "http";
  const clients = createServiceClients(
    grpcTransports(
      {
        guardrail: config.guardrailGrpcUrl ?? `${scheme}://127.0.0.1:${config.guardrailGrpcPort}`,
        speech: config.speechGrpcUrl ?? `${scheme}://127.0.0.1:${config.speechGrpcPort}`,
      },
      { internalToken: config.internalToken, tls },
      config.grpcUnaryTimeoutMs,
    ),
  );
  return startGateway(config.gatewayPorts, config.host, {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
    http: config.http,
    corsOrigins: config.corsOrigins,
  });
});
