/** GuardrailService + AccountService alone (one container of docker-compose). */
import { loadGrpcTls } from "../../platform/grpc-tls.js";
import { runUntilSignal } from "../../platform/lifecycle.js";
import { startGuardrailServer } from "../../services/guardrail/server.js";
import { openStore } from "../../store/open-store.js";

await runUntilSignal("guardrail", async (config) => {
  const store = await openStore(config);
  const server = await startGuardrailServer(store, config.guardrailGrpcPort, config.grpcHost, {
    managementKey: config.managementKey,
    env: config.env,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
    account: {
      allowSafetyRetentionGoogle: config.allowSafetyRetentionGoogle,
      allowSafetyRetentionOther: config.allowSafetyRetentionOther,
    },
    rateLimitPerMinute: config.rateLimitPerMinute,
  });
  return {
    close: async (options) => {
      await server.close(options);
      await store.close();
    },
  };
});
