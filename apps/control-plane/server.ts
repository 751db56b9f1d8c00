import { callerAuthInterceptor } from "../../domain/auth/caller-auth.js";
import { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import type { Catalog, CatalogSource } from "../../domain/catalog/types.js";
import type { RegionName } from "../../domain/enums.js";
import { trackCredits, trackGuardrailBudgets } from "../../domain/metrics.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { AccountService } from "../../gen/railgate/account/v1/account_service_pb.js";
import { GuardrailPolicyService } from "../../gen/railgate/guardrail/v1/guardrail_policy_service_pb.js";
import { GuardrailService } from "../../gen/railgate/guardrail/v1/guardrail_service_pb.js";
import { WebhookService } from "../../gen/railgate/webhook/v1/webhook_service_pb.js";
import { catchUpThresholds, type PrincipalLookup } from "../../governance/alerts/catch-up.js";
import { ShadowExpiryAnnouncer, type ShadowNotice } from "../../governance/alerts/shadow-expiry.js";
import { GovernanceCache } from "../../governance/governance-cache.js";
import type { AccountSettings } from "../../governance/policy/types.js";
import { CONFIG_DEFAULTS, type WebhookDeliveryConfig } from "../../platform/config/config.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { type ServedServices, startGrpcServer } from "../../platform/rpc/grpc-server.js";
import type { GrpcTls } from "../../platform/rpc/grpc-tls.js";
import { HealthServiceImpl } from "../../platform/rpc/health.js";
import { served } from "../../platform/rpc/in-process-transport.js";
import type { Clock } from "../../platform/time.js";
import { systemClock } from "../../platform/time.js";
import { cachedCredits } from "../../services/account/credit-gauges.js";
import { OperatorKey, reportWithoutOperatorKey } from "../../services/account/operator-key.js";
import { checkedAccountService } from "../../services/account/request-rules.js";
import { AccountServiceImpl } from "../../services/account/service.js";
import {
  BUDGET_GAUGES_TTL_MS,
  cachedGuardrailBudgets,
} from "../../services/guardrail/budget-gauges.js";
import { ModelIds } from "../../services/guardrail/model-ids.js";
import { checkedGuardrailService } from "../../services/guardrail/request-rules.js";
import { GuardrailServiceImpl } from "../../services/guardrail/service.js";
import { shadowReport } from "../../services/guardrail/shadow.js";
import { guardrailShadowNotice, guardrailShadows } from "../../services/guardrail/shadow-expiry.js";
import { replayWindow, simulate } from "../../services/guardrail/simulate.js";
import {
  accountPolicyShadows,
  accountShadowNotices,
} from "../../services/guardrail-policies/account-shadow.js";
import { GuardrailPolicyServiceImpl } from "../../services/guardrail-policies/service.js";
import {
  policyShadowNotice,
  policyShadows,
} from "../../services/guardrail-policies/shadow-expiry.js";
import type { GuardrailWhatIf } from "../../services/guardrail-policies/what-if.js";
import { loadCatalog } from "../../services/speech/catalog/load-catalog.js";
import { checkedWebhookService } from "../../services/webhooks/request-rules.js";
import { WebhookServiceImpl } from "../../services/webhooks/service.js";
import { DeliveryWorker } from "../../services/webhooks/worker.js";
import { AuditLog } from "../../store/request-log/audit-log.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { GenerationRecords } from "../../store/request-log/generations.js";
import { GuardrailVersions } from "../../store/request-log/guardrail-versions.js";
import { PolicyVersions } from "../../store/request-log/policy-versions.js";
import type { Store } from "../../store/types.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";

const log = componentLogger("guardrail");

export interface GuardrailServer extends ServedServices {
  accounts: AccountServiceImpl;
  /** Where other services of this process record their writes (webhooks); none without a database. */
  audit: AuditLog | undefined;
  defaultWorkspaceId: string | undefined;
  /** Asks this process's webhook delivery worker to look for due deliveries now. */
  kickWebhooks(): void;
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
   * The speech catalog, as SpeechService loads it: guardrails store the canonical id of a
   * model named by an alias (see services/guardrail/model-ids.ts). Default: the built-in one.
   */
  catalog?: CatalogSource;
  /** RAILGATE_RATE_LIMIT_PER_MINUTE: what GET /key reports for keys without their own. */
  rateLimitPerMinute?: number;
  /** How long the budget gauges reuse one store reading (default BUDGET_GAUGES_TTL_MS). */
  budgetGaugesTtlMs?: number;
  /**
   * The request-log database: management writes are recorded in its audit log. Without one
   * nothing is recorded and ListAuditEvents answers 503 (test systems that do not need it).
   */
  database?: SqlDatabase;
  /** RAILGATE_CONFIG_REFILL: refill a store that lost its configuration from the database (default on). */
  configRefill?: boolean;
  /** RAILGATE_REQUEST_LOG_RETENTION_DAYS: how far back a what-if replay may reach. */
  logRetentionDays?: number;
  /** RAILGATE_REPLAY_DATA_KEY: decrypts the inputs a what-if replay reads; unset, none are kept. */
  replayDataKey?: Buffer;
  /** RAILGATE_AUDIT_LOG_RETENTION_DAYS. Unset options take the configuration's defaults (CONFIG_DEFAULTS). */
  auditRetentionDays?: number;
  /** RAILGATE_REQUEST_LOG_QUEUE_MAX: audit events waiting for the database at most. */
  auditQueueMax?: number;
  /**
   * Budget-alert webhooks (with a database): delivery settings of this process's worker
   * (RAILGATE_WEBHOOK_*; their defaults when omitted). With a database this process serves
   * WebhookService and runs a delivery worker; without one, neither.
   */
  webhookDelivery?: WebhookDeliveryConfig;
  /** The webhook service's and worker's clock (tests); real time otherwise. */
  webhookClock?: Clock;
  /**
   * Admission's clock (the speech service's): key usage and the budget gauges read the
   * windows admission charges. The system clock unless a test pins one.
   */
  clock?: Clock;
}

/**
 * The ids and aliases of the catalog SpeechService loads. An alias names its
 * model whether or not the model's provider is configured in this process (the
 * guardrail service holds no provider keys): the built-in catalog lists its
 * OpenAI models only when an OpenAI key is set, so it is read here as if one were (a
 * check naming an OpenAI model is decided by the guardrail, whichever keys are set).
 */
function loadGuardrailCatalog(source: CatalogSource): Catalog {
  return loadCatalog({ ...source, openAi: source.openAi ?? {} });
}

/** A key's last use, as the request log has it (the records' database, shared in a split deployment). */
function lastUsedFrom(records: GenerationRecords) {
  return (keyHashes: readonly string[]) => records.lastUsed(keyHashes);
}

/**
 * The guardrail container: GuardrailService, AccountService and (with a database)
 * WebhookService share one process and one gRPC port. It is composed here, above the
 * services, so no service imports a sibling: each reaches the others only over RPC.
 *
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
  const audit =
    options.database &&
    new AuditLog(options.database, {
      retentionDays: options.auditRetentionDays ?? CONFIG_DEFAULTS.auditRetentionDays,
      queueLimit: options.auditQueueMax ?? CONFIG_DEFAULTS.requestLogQueueMax,
    });
  audit?.start();
  // Management writes carry their audit event and the objects they change to the database.
  // and a store that lost its configuration gets it back before anything is served or created.
  if (options.database) {
    store.attachConfigLog(options.database);
    if (options.configRefill ?? true) {
      // A database away at start: the store serves what it holds (a Redis that lost its
      // configuration is refilled by the next check; its default workspace waits for it).
      await store
        .restoreConfig()
        .catch((err: unknown) =>
          log.error(
            { err: String(err) },
            "configuration not checked against the database (unreachable?): retried while running",
          ),
        );
    }
  }
  const accounts = new AccountServiceImpl(store, {
    rateLimitPerMinute: options.rateLimitPerMinute ?? CONFIG_DEFAULTS.rateLimitPerMinute,
    audit,
    clock: options.clock,
    ...(options.database && {
      lastUsed: lastUsedFrom(new GenerationRecords(options.database)),
    }),
    replayData: {
      keyConfigured: options.replayDataKey !== undefined,
      logRetentionDays: options.logRetentionDays ?? CONFIG_DEFAULTS.logRetentionDays,
    },
  });
  const defaultWorkspaceId = await accounts.bootstrap();
  if (operatorKey) {
    await operatorKey.ensure();
    operatorKey.watch();
    log.info({ hash: operatorKey.hash }, "management key from RAILGATE_MANAGEMENT_KEY is active");
  } else {
    await reportWithoutOperatorKey(store);
  }
  const account = options.account ?? {
    allowSafetyRetentionGoogle: CONFIG_DEFAULTS.allowSafetyRetentionGoogle,
    allowSafetyRetentionOther: CONFIG_DEFAULTS.allowSafetyRetentionOther,
  };
  const catalog = loadGuardrailCatalog(options.catalog ?? {});
  // The catalog a check or a what-if replay decides and prices by (no voices needed: the
  // engine's voices are the speech service's to know, so an engine model's voice is not checked).
  const deciding = new ModelCatalog(catalog, []);
  // Made with the webhooks below; the guardrail and policy services tell it of an expiry a
  // report noticed.
  let shadowExpiry: ShadowExpiryAnnouncer | undefined;
  const announce = (notice: ShadowNotice | undefined, logged: Record<string, string>) =>
    void shadowExpiry
      ?.notice(notice)
      .catch((err: unknown) =>
        log.warn({ err: String(err), ...logged }, "shadow expiry not announced yet"),
      );
  const simulation = options.database && {
    database: options.database,
    catalog: deciding,
    account,
    retentionDays: options.logRetentionDays ?? CONFIG_DEFAULTS.logRetentionDays,
    replayDataKey: options.replayDataKey,
  };
  const guardrails = new GuardrailServiceImpl(
    store,
    new ModelIds(catalog),
    audit,
    {
      versions: options.database && new GuardrailVersions(options.database),
      checks: { catalog: deciding, account },
      shadowExpired: (workspaceId, guardrailId, report) =>
        announce(guardrailShadowNotice(workspaceId, guardrailId, report), { guardrailId }),
    },
    simulation,
  );
  // A policy's what-if and shadow report are the guardrail's, run on the policy as a guardrail.
  const policyWhatIf: GuardrailWhatIf = {
    report: (live, proposed, shadow, nowMs) =>
      shadowReport(
        {
          simulation,
          memberOf: async (hash) =>
            (await store.getKey(live.workspaceId, hash))?.memberUserId ?? "",
        },
        live,
        proposed,
        shadow,
        nowMs,
      ),
    ...(simulation && {
      replay: {
        simulate: (memberOf, current, proposed, fromMs, toMs, ownRules, everySpend) =>
          simulate(simulation, memberOf, current, proposed, fromMs, toMs, ownRules, everySpend),
        window: (nowMs, fromMs, toMs) =>
          replayWindow(nowMs, simulation.retentionDays, fromMs, toMs),
      },
    }),
  };
  const policies = new GuardrailPolicyServiceImpl(
    store,
    audit,
    {
      versions: options.database && new PolicyVersions(options.database),
      checks: { catalog: deciding, account },
      whatIf: policyWhatIf,
      shadowExpired: (policy, report) =>
        announce(policyShadowNotice(policy, report), {
          policyId: policy.id,
          policyType: policy.policyType,
        }),
      accountShadowExpired: (policy, report) => {
        for (const notice of accountShadowNotices(policy, report))
          announce(notice, { policyId: policy.id, policyType: "account" });
      },
    },
    options.clock,
  );
  const principals = new GovernanceCache(store, account);
  const ping = { store: () => store.ping() };
  const webhooks =
    options.database &&
    startWebhooks(store, options.database, {
      delivery: options.webhookDelivery ?? CONFIG_DEFAULTS.webhooks,
      clock: options.webhookClock,
      audit,
      principals,
      budgetClock: options.clock,
    });
  if (webhooks) {
    shadowExpiry = new ShadowExpiryAnnouncer(
      {
        sources: [
          guardrailShadows({
            listGuardrails: (ws, offset, limit) => store.listGuardrails(ws, offset, limit),
            report: async (id) => (await guardrails.shadowReportOf(id)).answer,
          }),
          policyShadows({
            listWorkspaces: (offset, limit) => store.listWorkspaces(offset, limit),
            shadowedPolicies: (ws) => policies.shadowedPolicies(ws),
            report: (type, id) => policies.shadowReportOf(type, id),
          }),
          accountPolicyShadows({
            shadowed: () => policies.accountShadows.shadowed(),
            covered: (p) => policies.accountShadows.covered(p),
            report: (id) => policies.accountShadows.reportOf(id),
          }),
        ],
        webhooks: webhooks.store,
        kick: () => webhooks.worker.kick(),
        clock: options.webhookClock,
      },
      (options.webhookDelivery ?? CONFIG_DEFAULTS.webhooks).shadowSweepIntervalMs,
    );
    shadowExpiry.start();
  }
  const health = new HealthServiceImpl({
    [GuardrailService.typeName]: ping,
    [AccountService.typeName]: ping,
    [GuardrailPolicyService.typeName]: ping,
    ...(webhooks ? { [WebhookService.typeName]: webhooks.health } : {}),
  });
  const server = await startGrpcServer(
    [
      served(GuardrailService, checkedGuardrailService(guardrails)),
      served(AccountService, checkedAccountService(accounts)),
      served(GuardrailPolicyService, policies),
      ...(webhooks ? [served(WebhookService, checkedWebhookService(webhooks.service))] : []),
      served(Health, health),
    ],
    port,
    host,
    {
      tls: options.tls,
      portVariable: "RAILGATE_GUARDRAIL_GRPC_PORT",
      interceptors: [
        callerAuthInterceptor({
          principals,
          // The operator's key comes back by itself when the store was emptied.
          recover: async (hash) => Boolean(await operatorKey?.recover(hash)),
          internalToken: options.internalToken,
          listenerRegion: options.listenerRegion ?? CONFIG_DEFAULTS.grpcRegion,
        }),
      ],
    },
  );
  // This process owns guardrail state, so it reports each guardrail's spend (read from the store).
  const gaugesTtlMs = options.budgetGaugesTtlMs ?? BUDGET_GAUGES_TTL_MS;
  const untrackBudgets = trackGuardrailBudgets(
    cachedGuardrailBudgets(store, gaugesTtlMs, options.clock),
  );
  // ... and, as it owns the accounts, each metered workspace's credits.
  const untrackCredits = trackCredits(cachedCredits(store, gaugesTtlMs));
  return {
    ...server,
    close: async (closeOptions) => {
      untrackBudgets();
      untrackCredits();
      health.drain();
      operatorKey?.close();
      // Before the sessions close: the gateways' streams end and they move to another replica.
      accounts.endWatches();
      await server.close(closeOptions);
      shadowExpiry?.close();
      await webhooks?.worker.close();
      principals.close();
      // After the last call: what it recorded is written before the database closes.
      await audit?.close();
    },
    accounts,
    audit,
    defaultWorkspaceId,
    kickWebhooks: () => webhooks?.worker.kick(),
  };
}

/** WebhookService over the database, and this process's delivery worker (started). */
function startWebhooks(
  store: Store,
  database: SqlDatabase,
  options: {
    delivery: WebhookDeliveryConfig;
    clock?: Clock;
    audit?: AuditLog;
    principals: PrincipalLookup;
    /** Admission's clock: the budget windows a catch-up reads are the ones it charges. */
    budgetClock?: Clock;
  },
) {
  const webhookStore = new SqlWebhookStore(database);
  const records = new GenerationRecords(database);
  const d = options.delivery;
  const worker = new DeliveryWorker(
    webhookStore,
    {
      timeoutMs: d.timeoutMs,
      intervalMs: d.workerIntervalMs,
      concurrency: d.concurrency,
      backoff: { baseMs: d.backoffBaseMs, maxMs: d.backoffMaxMs, maxAgeMs: d.maxAgeMs },
    },
    options.clock,
  );
  worker.start();
  const service = new WebhookServiceImpl({
    store,
    webhooks: webhookStore,
    kick: () => worker.kick(),
    clock: options.clock,
    audit: options.audit,
    catchUp: (hook) =>
      catchUpThresholds(
        {
          store,
          webhooks: webhookStore,
          principals: options.principals,
          budgetRefusals: (workspaceId, sinceMs) =>
            records.budgetRefusalsSince(workspaceId, sinceMs),
        },
        hook,
        new Date((options.budgetClock ?? systemClock).now()),
      ),
  });
  const health = {
    store: () => store.ping(),
    database: async () => {
      await database.query("SELECT 1");
    },
  };
  return { service, worker, health, store: webhookStore };
}
