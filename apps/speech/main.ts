/** SpeechService alone (one container of docker-compose). */
import { runUntilSignal } from "../../platform/lifecycle.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { startSpeechServer } from "../../services/speech/server.js";
import { openStore } from "../../store/open-store.js";
import { openDatabase } from "../../store/request-log/open-database.js";
import { speechServerOptions } from "../server-options.js";

await runUntilSignal("speech", async (config) => {
  // Never the embedded store unasked: its state would be this process's alone.
  const store = await openStore(config, undefined, "speech");
  // The request log: set DATABASE_URL when several speech replicas run (PGlite is one process).
  const database = await openDatabase(config);
  const server = await startSpeechServer(store, config.speechGrpcPort, config.grpcHost, {
    ...speechServerOptions(config),
    database,
  });
  // The port it bound (GRPC ports may be 0): what a gateway's RAILGATE_SPEECH_GRPC_URL must name.
  componentLogger("speech").info({ grpcPort: server.port }, "speech service is up");
  return {
    close: async (options) => {
      await server.close(options);
      await store.close();
      await database.close();
    },
  };
});
