/** GuardrailService + AccountService alone (one container of docker-compose). */
import { loadConfig } from "../common/config.js";
import { loadGrpcTls } from "../common/grpc-tls.js";
import { runUntilSignal } from "../common/lifecycle.js";
import { openStore } from "../common/store/open-store.js";
import { accountSettings } from "../policy/account-settings.js";
import { startGuardrailServer } from "./server.js";

await runUntilSignal("guardrail", async () => {
  const config = loadConfig();
  const store = await openStore(config);
  const server = await startGuardrailServer(store, config.guardrailGrpcPort, config.grpcHost, {
    managementKey: config.managementKey,
    internalToken: config.internalToken,
    listenerRegion: config.grpcRegion,
    tls: loadGrpcTls(config.grpcTls),
    account: accountSettings(config.env),
  });
  return {
    close: async () => {
      await server.close();
      await store.close();
    },
  };
});
