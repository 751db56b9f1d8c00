import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { OperatorKey } from "../account/operator-key.js";
import { AccountServiceImpl } from "../account/service.js";
import { type RunningServer, startGrpcServer } from "../common/grpc-server.js";
import { HealthServiceImpl } from "../common/health.js";
import { componentLogger } from "../common/logger.js";
import type { Store } from "../common/store/types.js";
import { GuardrailServiceImpl } from "./service.js";

const log = componentLogger("guardrail");

export interface GuardrailServer extends RunningServer {
  accounts: AccountServiceImpl;
  defaultWorkspaceId: string | undefined;
}

/**
 * GuardrailService and AccountService share one process and one gRPC port.
 * Start-up creates the default workspace (once per deployment, ever) and
 * registers the operator's management key when one is configured; both are
 * done again when the store comes back empty (see OperatorKey).
 */
export async function startGuardrailServer(
  store: Store,
  port: number,
  host?: string,
  options: { managementKey?: string } = {},
): Promise<GuardrailServer> {
  const operatorKey: OperatorKey | undefined = options.managementKey
    ? new OperatorKey(store, options.managementKey, (): Promise<unknown> => accounts.bootstrap())
    : undefined;
  const accounts = new AccountServiceImpl(store, operatorKey);
  const defaultWorkspaceId = await accounts.bootstrap();
  if (operatorKey) {
    await operatorKey.ensure();
    operatorKey.watch();
    log.info({ hash: operatorKey.hash }, "management key from RAILGATE_MANAGEMENT_KEY is active");
  }
  const guardrails = new GuardrailServiceImpl(store);
  const ping = { store: () => store.ping() };
  const health = new HealthServiceImpl({
    [GuardrailService.typeName]: ping,
    [AccountService.typeName]: ping,
  });
  const server = await startGrpcServer(
    (router) => {
      router.service(GuardrailService, guardrails);
      router.service(AccountService, accounts);
      router.service(Health, health);
    },
    port,
    host,
  );
  return {
    ...server,
    close: async (closeOptions) => {
      health.drain();
      operatorKey?.close();
      await server.close(closeOptions);
    },
    accounts,
    defaultWorkspaceId,
  };
}
