import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { AccountServiceImpl } from "../account/service.js";
import { type RunningServer, startGrpcServer } from "../common/grpc-server.js";
import type { Store } from "../common/store/types.js";
import { GuardrailServiceImpl } from "./service.js";

/** GuardrailService and AccountService share one process and one gRPC port. */
export async function startGuardrailServer(
  store: Store,
  port: number,
  host?: string,
): Promise<RunningServer & { accounts: AccountServiceImpl }> {
  const accounts = new AccountServiceImpl(store);
  const guardrails = new GuardrailServiceImpl(store);
  const server = await startGrpcServer(
    (router) => {
      router.service(GuardrailService, guardrails);
      router.service(AccountService, accounts);
    },
    port,
    host,
  );
  return { ...server, accounts };
}
