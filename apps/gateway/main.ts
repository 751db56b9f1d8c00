/** The gateway alone, calling services at RAILGATE_GUARDRAIL_GRPC_URL and RAILGATE_SPEECH_GRPC_URL. */

import { startGateway } from "../../gateway/app.js";
import { createServiceClients, grpcTransports } from "../../gateway/clients.js";
import { runUntilSignal } from "../../platform/lifecycle.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";
import { gatewayOptions } from "../server-options.js";

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
      config.grpcClient,
    ),
  );
  const gateway = await startGateway(
    config.gatewayPorts,
    config.host,
    gatewayOptions(config, clients),
  );
  // The ports it bound (any of them may be 0).
  componentLogger("gateway").info({ gateway: gateway.ports }, "gateway is up");
  return gateway;
});
