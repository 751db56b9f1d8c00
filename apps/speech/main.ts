/** SpeechService alone (one container of docker-compose). */
import { loadGrpcTls } from "../../platform/grpc-tls.js";
import { runUntilSignal } from "../../platform/lifecycle.js";
import { startSpeechServer } from "../../services/speech/server.js";
import { openStore } from "../../store/open-store.js";

await runUntilSignal("speech", async (config) => {
  const store = await openStore(config);
  const server = await startSpeechServer(store, config.speechGrpcPort, config.grpcHost, {
    env: config.env,
    enginePoolSize: config.enginePoolSize,
    embeddedEngine: config.embeddedEngine,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
    rateLimitPerMinute: config.rateLimitPerMinute,
    allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
    allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    retryQueueMax: config.retryQueueMax,
  });
  return {
    close: async (options) => {
      await server.close(options);
      await store.close();
    },
  };
});
