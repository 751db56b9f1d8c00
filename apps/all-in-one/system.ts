import { randomBytes } from "node:crypto";
import type { RegionName } from "../../domain/enums.js";
import { startGateway } from "../../gateway/app.js";
import { createServiceClients, grpcTransports, serviceCredential } from "../../gateway/clients.js";
import type { RailgateConfig } from "../../platform/config/config.js";
import { grpcClientMetricsInterceptor } from "../../platform/observability/grpc-metrics.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { loadGrpcTls } from "../../platform/rpc/grpc-tls.js";
import type { Clock } from "../../platform/time.js";
import { startSpeechEngine, startSpeechServer } from "../../services/speech/server.js";
import { openStore } from "../../store/open-store.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { openDatabase } from "../../store/request-log/open-database.js";
import type { Store } from "../../store/types.js";
import { startGuardrailServer } from "../control-plane/server.js";
import { gatewayOptions, guardrailServerOptions, speechServerOptions } from "../server-options.js";

const log = componentLogger("system");

export interface RunningSystem {
  store: Store;
  /** The request log's database (the audit log's and the webhooks' too). */
  database: SqlDatabase;
  gatewayPorts: Record<RegionName, number>;
  guardrailGrpcPort: number;
  speechGrpcPort: number;
  defaultWorkspaceId: string | undefined;
  /** Resolves once the budget-alert checks of every request settled so far are done (tests). */
  alertsIdle(): Promise<void>;
  /**
   * Drains, then stops: the gateway stops accepting at once, requests in progress may finish
   * within `graceMs` (default 0: cut now), each speech stream settles what it delivered, and
   * writes the store did not take are retried briefly before the store closes.
   */
  close(options?: { graceMs?: number }): Promise<void>;
}

/**
 * Everything in one process, each service on its own loopback gRPC port: what
 * `npm start` runs and what the end-to-end tests start (with port 0 everywhere).
 * The gateway calls the services' implementations in process (the same
 * interceptors, no HTTP/2); RAILGATE_INTERNAL_TRANSPORT=grpc, and the tests'
 * RAILGATE_TEST_TRANSPORT=grpc, make it call them over the loopback gRPC ports.
 */
export async function startSystem(
  config: RailgateConfig,
  seams: {
    /**
     * Admission's clock (rate window, budget days), and so the store's expiries, settlement's
     * usage windows, key usage, explain and the budget gauges: the system clock unless a test
     * pins one.
     */
    clock?: Clock;
    /**
     * A database already open (tests share one across systems); the system then leaves it
     * open on close. Otherwise it opens (and closes) the one the configuration names.
     */
    database?: SqlDatabase;
  } = {},
): Promise<RunningSystem> {
  // The engine's workers start while this thread opens the store and the database.
  const engineStart = startSpeechEngine(speechServerOptions(config));
  // Awaited below; until then its failure must not count as unhandled.
  engineStart.catch(() => undefined);
  const stopEngine = () =>
    engineStart.then(
      (started) => started.engine?.close(),
      () => undefined,
    );
  let store: Store;
  try {
    store = await openStore(config, undefined, undefined, seams.clock);
  } catch (err) {
    await stopEngine();
    throw err;
  }
  let database: SqlDatabase;
  try {
    database = seams.database ?? (await openDatabase(config));
  } catch (err) {
    await Promise.all([store.close(), stopEngine()]);
    throw err;
  }
  const ownsDatabase = seams.database === undefined;
  // In one process the gateway and the services share the service credential
  // in memory; a fresh random one serves when the operator did not set one.
  const internalToken = config.internalToken ?? randomBytes(32).toString("base64url");
  const tls = loadGrpcTls(config.grpcTls);
  let guardrail: Awaited<ReturnType<typeof startGuardrailServer>>;
  try {
    guardrail = await startGuardrailServer(store, config.guardrailGrpcPort, "127.0.0.1", {
      ...guardrailServerOptions(config),
      internalToken,
      clock: seams.clock,
      database,
    });
  } catch (err) {
    // A port in use, say: nothing started may keep the process (or a test's) alive.
    await Promise.all([store.close(), ownsDatabase ? database.close() : undefined, stopEngine()]);
    throw err;
  }
  const speech = await startSpeechServer(store, config.speechGrpcPort, "127.0.0.1", {
    ...speechServerOptions(config),
    internalToken,
    clock: seams.clock,
    database,
    engineStart,
    // In one process, alerts the speech service queues are sent at once by the guardrail's worker.
    onAlertsQueued: () => guardrail.kickWebhooks(),
  });
  const speechGrpcPort = speech.port;
  // Co-located, the gateway calls the services' implementations directly (same
  // interceptors, no HTTP/2, no serialization); the gRPC listeners stay up for
  // internal callers. RAILGATE_INTERNAL_TRANSPORT=grpc keeps the loopback hop.
  const scheme = tls ? "https" : "http";
  const inProcess = {
    clientInterceptors: [grpcClientMetricsInterceptor, serviceCredential(internalToken)],
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
          config.grpcClient,
        )
      : { guardrail: guardrail.inProcess(inProcess), speech: speech.inProcess(inProcess) },
  );
  const gateway = await startGateway(
    config.gatewayPorts,
    config.host,
    gatewayOptions(config, clients),
  );
  log.info(
    {
      gateway: gateway.ports,
      guardrailGrpc: guardrail.port,
      speechGrpc: speech.port,
      store: store.kind,
      // Why that store: RAILGATE_STORE, REDIS_URL (the store's own line says more).
      storeSetting: config.store,
      database: database.kind,
      internalTransport: config.internalTransport,
    },
    "railgate is up",
  );
  return {
    store,
    database,
    gatewayPorts: gateway.ports,
    guardrailGrpcPort: guardrail.port,
    speechGrpcPort,
    defaultWorkspaceId: guardrail.defaultWorkspaceId,
    alertsIdle: () => speech.alertsIdle(),
    close: async ({ graceMs = 0 } = {}) => {
      const deadline = Date.now() + graceMs;
      await gateway.close({ graceMs });
      // The gateway's streams have ended (or were cut): what is left is settling them.
      await speech.close({ graceMs: Math.max(0, deadline - Date.now()) });
      await guardrail.close();
      await store.close();
      if (ownsDatabase) await database.close();
    },
  };
}
