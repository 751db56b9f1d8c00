import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { GovernanceCache } from "../../governance/governance-cache.js";
import type { AccountSettings } from "../../governance/policy/types.js";
import { callerAuthInterceptor } from "../../platform/auth/caller-auth.js";
import { type ServedServices, startGrpcServer } from "../../platform/grpc-server.js";
import type { GrpcTls } from "../../platform/grpc-tls.js";
import { HealthServiceImpl } from "../../platform/health.js";
import { served } from "../../platform/in-process-transport.js";
import { componentLogger } from "../../platform/logger.js";
import { trackGuardrailBudgets } from "../../platform/metrics.js";
import type { RegionName } from "../../platform/regions.js";
import type { Store } from "../../store/types.js";
import { OperatorKey } from "../account/operator-key.js";
import { AccountServiceImpl } from "../account/service.js";
import { BUDGET_GAUGES_TTL_MS, cachedGuardrailBudgets } from "./budget-gauges.js";
import { loadModelIds } from "./model-ids.js";
import { checkedGuardrailService } from "./request-rules.js";
import { GuardrailServiceImpl } from "./service.js";

const log = componentLogger("guardrail");

export interface GuardrailServer extends ServedServices {
  accounts: AccountServiceImpl;
  defaultWorkspaceId: string | undefined;
}

export interface GuardrailServerOptions {
  /** The operator's management key (RAILGATE_MANAGEMENT_KEY), registered at start-up. */
  managementKey?: string;
  /** The service credential of Railgate gateways (RAILGATE_INTERNAL_TOKEN). */
  internalToken?: string;
  /** The ingress region of callers that reach this listener directly. */
  listenerRegion?: RegionName;
  /** Serve TLS; a client certificate from `tls.ca` proves a gateway (mTLS). */
  tls?: GrpcTls;
  account?: AccountSettings;
  /**
   * The environment the speech catalog is loaded from (SPEECH_CATALOG_FILE,
   * provider keys), as SpeechService loads it: guardrails store the canonical
   * id of a model named by an alias (see model-ids.ts). Default: process.env.
   */
  env?: NodeJS.ProcessEnv;
  /** RATE_LIMIT_PER_MINUTE (default 600): what GET /key reports for keys without their own. */
  rateLimitPerMinute?: number;
  /** How long the budget gauges reuse one store reading (default BUDGET_GAUGES_TTL_MS). */
  budgetGaugesTtlMs?: number;
}

/**
 * GuardrailService and AccountService share one process and one gRPC port.
 * Start-up creates the default workspace (once per deployment, ever) and
 * registers the operator's management key when one is configured; both are
 * done again when the store comes back empty (see OperatorKey). Every RPC
 * needs a management key, but for Authenticate (any key: it answers who the
 * caller is), WatchInvalidations (gateways and management keys) and
 * grpc.health.v1 (anyone).
 */
export async function startGuardrailServer(
  store: Store,
  port: number,
  host?: string,
  options: GuardrailServerOptions = {},
): Promise<GuardrailServer> {
  const operatorKey: OperatorKey | undefined = options.managementKey
    ? new OperatorKey(store, options.managementKey, (): Promise<unknown> => accounts.bootstrap())
    : undefined;
  const accounts = new AccountServiceImpl(store, {
    rateLimitPerMinute: options.rateLimitPerMinute ?? 600,
  });
  const defaultWorkspaceId = await accounts.bootstrap();
  if (operatorKey) {
    await operatorKey.ensure();
    operatorKey.watch();
    log.info({ hash: operatorKey.hash }, "management key from RAILGATE_MANAGEMENT_KEY is active");
  }
  const guardrails = new GuardrailServiceImpl(store, loadModelIds(options.env ?? process.env));
  const principals = new GovernanceCache(
    store,
    options.account ?? { allowSafetyRetentionGoogle: true, allowSafetyRetentionOther: true },
  );
  const ping = { store: () => store.ping() };
  const health = new HealthServiceImpl({
    [GuardrailService.typeName]: ping,
    [AccountService.typeName]: ping,
  });
  const server = await startGrpcServer(
    [
      served(GuardrailService, checkedGuardrailService(guardrails)),
      served(AccountService, accounts),
      served(Health, health),
    ],
    port,
    host,
    {
      tls: options.tls,
      interceptors: [
        callerAuthInterceptor({
          principals,
          // The operator's key comes back by itself when the store was emptied.
          recover: async (hash) => Boolean(await operatorKey?.recover(hash)),
          internalToken: options.internalToken,
          listenerRegion: options.listenerRegion ?? "global",
          access: {
            [`${AccountService.typeName}/Authenticate`]: "any-key",
            [`${AccountService.typeName}/GetCurrentKey`]: "any-key",
            [`${AccountService.typeName}/WatchInvalidations`]: "gateway",
            [`${Health.typeName}/*`]: "public",
          },
        }),
      ],
    },
  );
  // This process owns guardrail state, so it reports each guardrail's spend (read from the store).
  const untrackBudgets = trackGuardrailBudgets(
    cachedGuardrailBudgets(store, options.budgetGaugesTtlMs ?? BUDGET_GAUGES_TTL_MS),
  );
  return {
    ...server,
    close: async (closeOptions) => {
      untrackBudgets();
      health.drain();
      operatorKey?.close();
      await server.close(closeOptions);
      principals.close();
    },
    accounts,
    defaultWorkspaceId,
  };
}
