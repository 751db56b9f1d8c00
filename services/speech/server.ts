import { Health } from "../../gen/grpc/health/v1/health_pb.js";
import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { GovernanceCache } from "../../governance/governance-cache.js";
import { callerAuthInterceptor } from "../../platform/auth/caller-auth.js";
import { type ServedServices, startGrpcServer } from "../../platform/grpc-server.js";
import type { GrpcTls } from "../../platform/grpc-tls.js";
import { HealthServiceImpl } from "../../platform/health.js";
import { served } from "../../platform/in-process-transport.js";
import { componentLogger } from "../../platform/logger.js";
import type { RegionName } from "../../platform/regions.js";
import { RetryQueue } from "../../platform/retry-queue.js";
import type { Clock } from "../../platform/time.js";
import type { Store } from "../../store/types.js";
import { loadCatalog } from "./catalog/load-catalog.js";
import { ModelCatalog } from "./catalog/model-catalog.js";
import type { Catalog } from "./catalog/types.js";
import { withoutEmbeddedEngine } from "./catalog/without-embedded-engine.js";
import {
  type EmbeddedEngineSetting,
  embeddedEngineUnavailable,
} from "./engines/espeak/availability.js";
import { EspeakEngine } from "./engines/espeak/engine.js";
import { publicVoices } from "./engines/espeak/public-voices.js";
import { AdapterRegistry } from "./engines/registry.js";
import { SpeechServiceImpl } from "./service.js";

const log = componentLogger("speech");

export interface SpeechServerOptions {
  env?: NodeJS.ProcessEnv;
  /** Worker threads of the embedded engine (default: the number of cores). */
  enginePoolSize?: number;
  /** The service credential of Railgate gateways (RAILGATE_INTERNAL_TOKEN). */
  internalToken?: string;
  /** The ingress region of callers that reach this listener directly. */
  listenerRegion?: RegionName;
  /** Serve TLS; a client certificate from `tls.ca` proves a gateway (mTLS). */
  tls?: GrpcTls;
  /** RATE_LIMIT_PER_MINUTE (default 600). */
  rateLimitPerMinute?: number;
  /** ACCOUNT_ALLOW_SAFETY_RETENTION_GOOGLE / _OTHER (default true). */
  allowSafetyRetentionGoogle?: boolean;
  allowSafetyRetentionOther?: boolean;
  /** STORE_RETRY_QUEUE_MAX: settlements and records kept while the store is down. */
  retryQueueMax?: number;
  /** RAILGATE_EMBEDDED_ENGINE (default "auto": eSpeak NG when its package is installed). */
  embeddedEngine?: EmbeddedEngineSetting;
  /** Admission's clock (rate window, budget days): the system clock unless a test pins one. */
  clock?: Clock;
}

/** After the grace period, how long cancelled calls get to settle before the rest is dropped. */
const SETTLE_MARGIN_MS = 2_000;

/** SpeechService on its own gRPC port, with the embedded engine's worker pool. */
export async function startSpeechServer(
  store: Store,
  port: number,
  host?: string,
  options: SpeechServerOptions = {},
): Promise<ServedServices> {
  const env = options.env ?? process.env;
  const { catalog, engine } = await startEngine(loadCatalog(env), options);
  try {
    const models = new ModelCatalog(
      catalog,
      publicVoices(engine?.voices() ?? []).map((v) => ({
        id: v.id,
        name: v.name,
        languages: v.languages,
      })),
    );
    const adapters = new AdapterRegistry({ catalog, engine, env });
    const governance = new GovernanceCache(store, {
      allowSafetyRetentionGoogle: options.allowSafetyRetentionGoogle ?? true,
      allowSafetyRetentionOther: options.allowSafetyRetentionOther ?? true,
    });
    const retries = new RetryQueue({ max: options.retryQueueMax ?? 10_000 });
    // The store is back (its pub/sub connection reconnected): apply kept writes now.
    const unsubscribe = store.onInvalidate((scope) => scope === "*" && retries.kick());
    const service = new SpeechServiceImpl({
      store,
      catalog: models,
      adapters,
      governance,
      metering: { rateLimitPerMinute: options.rateLimitPerMinute ?? 600 },
      clock: options.clock,
      retries,
    });
    const health = new HealthServiceImpl({
      [SpeechService.typeName]: {
        store: () => store.ping(),
        // Without the embedded engine there is nothing of it to probe: upstream models serve.
        ...(engine ? { engine: () => engine.checkHealth() } : {}),
      },
    });
    // Synthesize and GetGeneration need a standard key, ListModels and health nothing,
    // Explain (the default) a management key.
    const server = await startGrpcServer(
      [served(SpeechService, service), served(Health, health)],
      port,
      host,
      {
        tls: options.tls,
        interceptors: [
          callerAuthInterceptor({
            principals: governance,
            internalToken: options.internalToken,
            listenerRegion: options.listenerRegion ?? "global",
            access: {
              [`${SpeechService.typeName}/Synthesize`]: "standard",
              [`${SpeechService.typeName}/GetGeneration`]: "standard",
              [`${SpeechService.typeName}/ListModels`]: "public",
              [`${Health.typeName}/*`]: "public",
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
      // Streams in progress may finish within the grace period; then they are cancelled, each
      // settles what it delivered, and settlements the store did not take are retried a little.
      close: async ({ graceMs = 0 } = {}) => {
        const deadline = Date.now() + graceMs;
        health.drain();
        await server.close({ graceMs });
        await service.inFlight.idle(SETTLE_MARGIN_MS);
        await service.drainRetries(Math.max(SETTLE_MARGIN_MS, deadline - Date.now()));
        unsubscribe();
        governance.close();
        await Promise.all([engine?.close(), adapters.close()]);
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
  options: SpeechServerOptions,
): Promise<{ catalog: Catalog; engine?: EspeakEngine }> {
  const unavailable = embeddedEngineUnavailable(options.embeddedEngine ?? "auto");
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
