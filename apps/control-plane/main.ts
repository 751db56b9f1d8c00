/**
 * The control plane alone: GuardrailService, GuardrailPolicyService, AccountService and (with a
 * database) WebhookService in one process (the `guardrail` service of docker-compose and the chart).
 */
import { runUntilSignal } from "../../platform/lifecycle.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { startStandaloneRecovery } from "../../services/speech/recovery/record-recovery.js";
import { openStore } from "../../store/open-store.js";
import { openDatabase } from "../../store/request-log/open-database.js";
import { guardrailServerOptions } from "../server-options.js";
import { startGuardrailServer } from "./server.js";

await runUntilSignal("control-plane", async (config) => {
  // Never the embedded store unasked: its state would be this process's alone.
  const store = await openStore(config, undefined, "control-plane");
  // The audit log lives in the request-log database (DATABASE_URL in a split deployment).
  const database = await openDatabase(config);
  const server = await startGuardrailServer(store, config.guardrailGrpcPort, config.grpcHost, {
    ...guardrailServerOptions(config),
    database,
  });
  // Reservations of speech processes that died are settled here too, even while none runs;
  // only into a shared request log (a PGlite folder of its own would hide the records).
  const recovery = config.databaseUrl
    ? startStandaloneRecovery(store, database, config)
    : undefined;
  // The port it bound (GRPC ports may be 0): what a gateway's RAILGATE_GUARDRAIL_GRPC_URL must name.
  componentLogger("control-plane").info({ grpcPort: server.port }, "control plane is up");
  return {
    close: async (options) => {
      await server.close(options);
      await recovery?.close();
      await database.close();
      await store.close();
    },
  };
});
