import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { AccountServiceImpl } from "../account/service.js";
import { type RunningServer, startGrpcServer } from "../common/grpc-server.js";
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
 * registers the operator's management key when one is configured.
 */
export async function startGuardrailServer(
  store: Store,
  port: number,
  host?: string,
  options: { managementKey?: string } = {},
): Promise<GuardrailServer> {
  const accounts = new AccountServiceImpl(store);
  const defaultWorkspaceId = await accounts.bootstrap();
  if (options.managementKey) {
    const { key } = await accounts.ensureManagementKey({
      secret: options.managementKey,
      name: "Operator management key (RAILGATE_MANAGEMENT_KEY)",
    });
    log.info({ hash: key?.hash }, "management key from RAILGATE_MANAGEMENT_KEY is active");
  }
  const guardrails = new GuardrailServiceImpl(store);
  const server = await startGrpcServer(
    (router) => {
      router.service(GuardrailService, guardrails);
      router.service(AccountService, accounts);
    },
    port,
    host,
  );
  return { ...server, accounts, defaultWorkspaceId };
}
