/** SpeechService alone (one container of docker-compose). */
import { loadConfig } from "../common/config.js";
import { loadGrpcTls } from "../common/grpc-tls.js";
import { runUntilSignal } from "../common/lifecycle.js";
import { openStore } from "../common/store/open-store.js";
import { startSpeechServer } from "./server.js";

await runUntilSignal("speech", async () => {
  const config = loadConfig();
  const store = await openStore(config);
  const server = await startSpeechServer(store, config.speechGrpcPort, config.grpcHost, {
    env: config.env,
    enginePoolSize: config.enginePoolSize,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
  });
  return {
    close: async () => {
      await server.close();
      await store.close();
    },
  };
});
