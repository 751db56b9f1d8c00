import { randomBytes } from "node:crypto";
import { startGateway } from "../../gateway/app.js";
import { createServiceClients, grpcTransports, serviceCredential } from "../../gateway/clients.js";
import type { RailgateConfig } from "../../platform/config.js";
import { loadGrpcTls } from "../../platform/grpc-tls.js";
import { componentLogger } from "../../platform/logger.js";
import type { RegionName } from "../../platform/regions.js";
import type { Clock } from "../../platform/time.js";
import { startGuardrailServer } from "../../services/guardrail/server.js";
import { startSpeechServer } from "../../services/speech/server.js";
import { openStore } from "../../store/open-store.js";
import type { Store } from "../../store/types.js";

const log = componentLogger("system");

export interface RunningSystem {
  store: Store;
  gatewayPorts: Record<RegionName, number>;
  guardrailGrpcPort: number;
  speechGrpcPort: number;
  defaultWorkspaceId: string | undefined;
  /**
   * Drains, then stops: the gateway stops accepting at once, requests in progress may finish
   * within `graceMs` (default 0: cut now), each speech stream settles what it delivered, and
   * writes the store did not take are retried briefly before the store closes.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Everything in one process, each service on its own loopback gRPC port and
 * the gateway calling them over real gRPC: what `npm start` runs and what the
 * end-to-end tests start (with port 0 everywhere).
 */
export async function startSystem(
  config: RailgateConfig,
  /** Admission's clock (rate window, budget days): the system clock unless a test pins one. */
  seams: { clock?: Clock } = {},
): Promise<RunningSystem> {
  const store = await openStore(config);
  // In one process the gateway and the services share the service credential
  // in memory; a fresh random one serves when the operator did not set one.
  const internalToken = config.internalToken ?? randomBytes(32).toString("base64url");
  const tls = loadGrpcTls(config.grpcTls);
  const access = { internalToken, listenerRegion: config.grpcRegion, tls };
  const guardrail = await startGuardrailServer(store, config.guardrailGrpcPort, "127.0.0.1", {
    managementKey: config.managementKey,
    env: config.env,
    account: {
      allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
      allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    },
    rateLimitPerMinute: config.rateLimitPerMinute,
    budgetGaugesTtlMs: config.budgetGaugesTtlMs,
    ...access,
  });
  const speech = await startSpeechServer(store, config.speechGrpcPort, "127.0.0.1", {
    env: config.env,
    enginePoolSize: config.enginePoolSize,
    embeddedEngine: config.embeddedEngine,
    ...access,
    rateLimitPerMinute: config.rateLimitPerMinute,
    allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
    allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    retryQueueMax: config.retryQueueMax,
    clock: seams.clock,
  });
  const speechGrpcPort = speech.port;
  // Co-located, the gateway calls the services' implementations directly (same
  // interceptors, no HTTP/2, no serialization); the gRPC listeners stay up for
  // internal callers. RAILGATE_INTERNAL_TRANSPORT=grpc keeps the loopback hop.
  const scheme = tls ? "https" : "http";
  const inProcess = {
    clientInterceptors: [serviceCredential(internalToken)],
    freezeMessages: config.freezeInProcessMessages,
  };
  const clients = createServiceClients(
    config.internalTransport === "grpc"
      ? grpcTransports(
          {
            guardrail: `${scheme}://127.0.0.1:${guardrail.port}`,
            speech: `${scheme}://127.0.0.1:${speechGrpcPort}`,
          },
          { internalToken, tls },
          config.grpcUnaryTimeoutMs,
        )
      : { guardrail: guardrail.inProcess(inProcess), speech: speech.inProcess(inProcess) },
  );
  const gateway = await startGateway(config.gatewayPorts, config.host, {
    clients,
    maxBodyBytes: config.maxBodyBytes,
    maxSpeechBodyBytes: config.maxSpeechBodyBytes,
    http: config.http,
    corsOrigins: config.corsOrigins,
  });
  log.info(
    {
      gateway: gateway.ports,
      guardrailGrpc: guardrail.port,
      speechGrpc: speech.port,
      store: store.kind,
      internalTransport: config.internalTransport,
    },
    "railgate is up",
  );
  return {
    store,
    gatewayPorts: gateway.ports,
    guardrailGrpcPort: guardrail.port,
    speechGrpcPort,
    defaultWorkspaceId: guardrail.defaultWorkspaceId,
    close: async ({ graceMs = 0 } = {}) => {
      const deadline = Date.now() + graceMs;
      await gateway.close({ graceMs });
      // The gateway's streams have ended (or were cut): what is left is settling them.
      await speech.close({ graceMs: Math.max(0, deadline - Date.now()) });
      await guardrail.close();
      await store.close();
    },
  };
}
