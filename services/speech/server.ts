import { setTimeout as sleep } from "node:timers/promises";
import { create, isMessage } from "@bufbuild/protobuf";
import { callerAuthInterceptor } from "../../domain/auth/caller-auth.js";
import { ModelCatalog } from "../../domain/catalog/model-catalog.js";
import type { Catalog, CatalogSource } from "../../domain/catalog/types.js";
import type { RegionName } from "../../domain/enums.js";
import { admissionRefusals } from "../../domain/metrics.js";
import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { ErrorReason } from "../../gen/railgate/common/v1/error_info_pb.js";
import { VoiceSchema } from "../../gen/railgate/speech/v1/speech_pb.js";
import {
  SpeechService,
  SynthesizeRequestSchema,
} from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { AlertDetector } from "../../governance/alerts/detector.js";
import { GovernanceCache } from "../../governance/governance-cache.js";
import {
  type AudioCacheConfig,
  CONFIG_DEFAULTS,
  type RecoveryConfig,
  type SpeechRoutingConfig,
} from "../../platform/config/config.js";
import { componentLogger } from "../../platform/observability/logger.js";
import { errorInfoOf } from "../../platform/rpc/errors.js";
import { type ServedServices, startGrpcServer } from "../../platform/rpc/grpc-server.js";
import type { GrpcTls } from "../../platform/rpc/grpc-tls.js";
import { HealthServiceImpl } from "../../platform/rpc/health.js";
import { served } from "../../platform/rpc/in-process-transport.js";
import { type Clock, systemClock } from "../../platform/time.js";
import type { SqlDatabase } from "../../store/request-log/database.js";
import { RetryQueue } from "../../store/retry-queue.js";
import type { Store } from "../../store/types.js";
import { SqlWebhookStore } from "../../store/webhooks/sql-webhook-store.js";
import { closeSpareEncoders } from "./audio/index.js";
import { AudioCache } from "./cache/audio-cache.js";
import { loadCatalog } from "./catalog/load-catalog.js";
import { withoutEmbeddedEngine } from "./catalog/without-embedded-engine.js";
import {
  type EmbeddedEngineSetting,
  embeddedEngineUnavailable,
} from "./engines/espeak/availability.js";
import { EspeakEngine } from "./engines/espeak/engine.js";
import { publicVoices } from "./engines/espeak/public-voices.js";
import { AdapterRegistry } from "./engines/registry.js";
import { GenerationLog } from "./generations.js";
import { startRecordRecovery } from "./recovery/record-recovery.js";
import { ReservationKeeper } from "./recovery/reservation-keeper.js";
import { recoveryTimings } from "./recovery/timings.js";
import { callerRefusalRecord } from "./refusal-record.js";
import { SpeechServiceImpl } from "./service.js";

const log = componentLogger("speech");

export interface SpeechServerOptions {
  /** The speech catalog (default: the built-in one, without OpenAI's models). */
  catalog?: CatalogSource;
  /** Where upstream providers' API keys are read, by the catalog's `api_key_env` names. */
  env?: NodeJS.ProcessEnv;
  /** Worker threads of the embedded engine (default: the number of cores). */
  enginePoolSize?: number;
  /** The service credential of Railgate gateways (RAILGATE_INTERNAL_TOKEN). */
  internalToken?: string;
  /** The ingress region of callers that reach this listener directly. */
  listenerRegion?: RegionName;
  /** Serve TLS; a client certificate from `tls.ca` proves a gateway (mTLS). */
  tls?: GrpcTls;
  /** RAILGATE_RATE_LIMIT_PER_MINUTE. Unset options take the configuration's defaults (CONFIG_DEFAULTS). */
  rateLimitPerMinute?: number;
  /** RAILGATE_ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE / _OTHER. */
  allowSafetyRetentionGoogle?: boolean;
  allowSafetyRetentionOther?: boolean;
  /** RAILGATE_STORE_RETRY_QUEUE_MAX: settlements kept while the store is down. */
  retryQueueMax?: number;
  /** The request log's database (store/request-log/open-database.ts); the caller closes it. */
  database: SqlDatabase;
  /** RAILGATE_REQUEST_LOG_RETENTION_DAYS. */
  logRetentionDays?: number;
  /** RAILGATE_REQUEST_LOG_QUEUE_MAX. */
  requestLogQueueMax?: number;
  /** RAILGATE_REPLAY_DATA_KEY: seals the inputs kept for what-if replays; unset, none are kept. */
  replayDataKey?: Buffer;
  /** RAILGATE_EMBEDDED_ENGINE (default "auto": eSpeak NG when its package is installed). */
  embeddedEngine?: EmbeddedEngineSetting;
  /** Admission's clock (rate window, budget days): the system clock unless a test pins one. */
  clock?: Clock;
  /** RAILGATE_AUDIO_CACHE_* (docs/api.md "Audio cache"); the defaults when absent. */
  audioCache?: AudioCacheConfig;
  /**
   * Budget alerts (webhooks live in `database`): who to tell when alerts were queued, the
   * delivery worker of this process when it runs one (else the workers' interval finds them).
   */
  onAlertsQueued?: () => void;
  /** Circuit breakers and retries (RAILGATE_SPEECH_BREAKER_*, RAILGATE_SPEECH_RETRY*); the defaults unless given. */
  routing?: SpeechRoutingConfig;
  /** RAILGATE_RECOVERY_*: how soon a dead process' reservations are settled. */
  recovery?: RecoveryConfig;
  /**
   * The catalog and engine, started beforehand (startSpeechEngine): one process starts the
   * engine's workers while it opens its store and database. Started here when absent.
   */
  engineStart?: Promise<SpeechEngineStart>;
}

/** The speech catalog, with the embedded engine's worker pool when it serves. */
export interface SpeechEngineStart {
  catalog: Catalog;
  engine?: EspeakEngine;
}

/**
 * Loads the catalog and starts the embedded engine's workers (the slowest part of a start:
 * each compiles eSpeak NG), for a caller with other start-up work to do meanwhile.
 */
export async function startSpeechEngine(
  options: Pick<SpeechServerOptions, "catalog" | "embeddedEngine" | "enginePoolSize">,
): Promise<SpeechEngineStart> {
  return startEngine(loadCatalog(options.catalog ?? {}), options);
}

export interface SpeechServer extends ServedServices {
  /** Resolves once the budget-alert checks of the settlements so far are done (tests, shutdown). */
  alertsIdle(): Promise<void>;
}

/** After the grace period, how long cancelled calls get to settle before the rest is dropped. */
const SETTLE_MARGIN_MS = 2_000;

/** SpeechService on its own gRPC port, with the embedded engine's worker pool. */
export async function startSpeechServer(
  store: Store,
  port: number,
  host: string | undefined,
  options: SpeechServerOptions,
): Promise<SpeechServer> {
  const env = options.env ?? process.env;
  const { catalog, engine } = await (options.engineStart ?? startSpeechEngine(options));
  try {
    const models = new ModelCatalog(
      catalog,
      publicVoices(engine?.voices() ?? []).map((v) =>
        create(VoiceSchema, { id: v.id, name: v.name, languages: v.languages }),
      ),
    );
    const adapters = new AdapterRegistry({ catalog, engine, env });
    const governance = new GovernanceCache(store, {
      allowSafetyRetentionGoogle:
        options.allowSafetyRetentionGoogle ?? CONFIG_DEFAULTS.allowSafetyRetentionGoogle,
      allowSafetyRetentionOther:
        options.allowSafetyRetentionOther ?? CONFIG_DEFAULTS.allowSafetyRetentionOther,
    });
    const retries = new RetryQueue({ max: options.retryQueueMax ?? CONFIG_DEFAULTS.retryQueueMax });
    const generations = new GenerationLog(options.database, {
      outbox: store,
      retentionDays: options.logRetentionDays ?? CONFIG_DEFAULTS.logRetentionDays,
      queueMax: options.requestLogQueueMax ?? CONFIG_DEFAULTS.requestLogQueueMax,
    });
    generations.startMaintenance();
    const now = () => (options.clock ?? systemClock).now();
    const recovery = recoveryTimings(options.recovery ?? CONFIG_DEFAULTS.recovery);
    // The embedded store dies with this process: nothing of it outlives a crash to recover.
    const keeper =
      store.kind === "redis"
        ? new ReservationKeeper(store, {
            leaseMs: recovery.leaseMs,
            checkpointMs: recovery.checkpointMs,
            now,
          })
        : undefined;
    keeper?.start();
    const recoverer = startRecordRecovery(
      store,
      generations,
      options.recovery ?? CONFIG_DEFAULTS.recovery,
      now,
    );
    // The store is back (its pub/sub connection reconnected): apply kept writes now.
    const unsubscribe = store.onInvalidate((scope) => scope === "*" && retries.kick());
    // Real time, not admission's clock: events are stamped and queued now; their windows are
    // the admission's own (the day each request was charged to).
    const detector = new AlertDetector(store, new SqlWebhookStore(options.database), {
      onQueued: options.onAlertsQueued,
    });
    const audioCache = options.audioCache ?? CONFIG_DEFAULTS.audioCache;
    const service = new SpeechServiceImpl({
      store,
      catalog: models,
      adapters,
      governance,
      metering: {
        rateLimitPerMinute: options.rateLimitPerMinute ?? CONFIG_DEFAULTS.rateLimitPerMinute,
      },
      clock: options.clock,
      retries,
      generations,
      alerts: detector,
      routing: options.routing,
      keeper,
      replayDataKey: options.replayDataKey,
      audioCache: new AudioCache(
        store.openAudioClips({ memoryBytes: audioCache.memoryBytes }),
        audioCache,
      ),
    });
    const health = new HealthServiceImpl({
      [SpeechService.typeName]: {
        store: () => store.ping(),
        // Without the embedded engine there is nothing of it to probe: upstream models serve.
        ...(engine ? { engine: () => engine.checkHealth() } : {}),
      },
    });
    // Synthesize and ListUserModels need a standard key; the request log's reads any key (the
    // service scopes them: a standard key to its own records); ListModels and health nothing;
    // Explain (the default) a management key.
    const server = await startGrpcServer(
      [served(SpeechService, service), served(Health, health)],
      port,
      host,
      {
        tls: options.tls,
        portVariable: "RAILGATE_SPEECH_GRPC_PORT",
        interceptors: [
          callerAuthInterceptor({
            principals: governance,
            internalToken: options.internalToken,
            listenerRegion: options.listenerRegion ?? CONFIG_DEFAULTS.grpcRegion,
            // A speech request of a disabled or expired key, or refused by region rule 1, is
            // logged like every other refusal, and stored before its client is answered.
            onKeyRefused: async ({ principal, region, method, message, error }) => {
              if (method !== "Synthesize" || !isMessage(message, SynthesizeRequestSchema)) return;
              if (errorInfoOf(error)?.reason === ErrorReason.REGION_NOT_ALLOWED)
                admissionRefusals.labels("region").inc();
              const record = callerRefusalRecord(principal, region, message, error);
              if (record) await generations.addStored(record);
            },
          }),
        ],
      },
    );
    log.info(
      { models: catalog.models.map((m) => m.id), voices: engine?.voices().length ?? 0 },
      "speech catalog loaded",
    );
    return {
      port: server.port,
      inProcess: server.inProcess,
      alertsIdle: () => detector.whenIdle(),
      // Streams in progress may finish within the grace period; then they are cancelled, each
      // settles what it delivered, and settlements the store did not take are retried a little.
      close: async ({ graceMs = 0 } = {}) => {
        const deadline = Date.now() + graceMs;
        health.drain();
        await server.close({ graceMs });
        await service.inFlight.idle(SETTLE_MARGIN_MS);
        await service.drainRetries(Math.max(SETTLE_MARGIN_MS, deadline - Date.now()));
        // Alert checks of the last settlements, briefly: the database is closed next.
        await Promise.race([detector.whenIdle(), sleep(SETTLE_MARGIN_MS)]);
        // Every stream has ended and settled: nothing is left to keep or recover here.
        await Promise.all([keeper?.close(), recoverer.close()]);
        // Their records are queued; write them before the database closes.
        await generations.close();
        unsubscribe();
        governance.close();
        await Promise.all([engine?.close(), adapters.close(), closeSpareEncoders()]);
      },
    };
  } catch (err) {
    await engine?.close();
    throw err;
  }
}

/**
 * The embedded engine's worker pool, or none when it is switched off or its (GPL-3.0) package
 * is not installed: then its catalog entries are skipped, loudly, and the rest is served.
 */
async function startEngine(
  catalog: Catalog,
  options: Pick<SpeechServerOptions, "embeddedEngine" | "enginePoolSize">,
): Promise<{ catalog: Catalog; engine?: EspeakEngine }> {
  const unavailable = embeddedEngineUnavailable(
    options.embeddedEngine ?? CONFIG_DEFAULTS.embeddedEngine,
  );
  if (unavailable === undefined) {
    return { catalog, engine: await EspeakEngine.start({ poolSize: options.enginePoolSize }) };
  }
  const trimmed = withoutEmbeddedEngine(catalog);
  log.warn(
    {
      reason: unavailable,
      skippedModels: trimmed.skippedModels,
      trimmedModels: trimmed.trimmedModels,
    },
    "embedded speech engine (eSpeak NG) not available: its catalog entries are skipped",
  );
  if (trimmed.catalog.models.length === 0) {
    log.warn("the speech catalog has no model left: every speech request will be refused");
  }
  return { catalog: trimmed.catalog };
}
