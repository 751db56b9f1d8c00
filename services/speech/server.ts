import { SpeechService } from "../../gen/railgate/speech/v1/speech_service_pb.js";
import { callerAuthInterceptor } from "../common/auth/caller-auth.js";
import { type ServedServices, startGrpcServer } from "../common/grpc-server.js";
import type { GrpcTls } from "../common/grpc-tls.js";
import { served } from "../common/in-process-transport.js";
import { componentLogger } from "../common/logger.js";
import type { Store } from "../common/store/types.js";
import { accountSettings } from "../policy/account-settings.js";
import type { RegionName } from "../policy/types.js";
import { loadCatalog } from "./catalog/load-catalog.js";
import { ModelCatalog } from "./catalog/model-catalog.js";
import { EspeakEngine } from "./engines/espeak/engine.js";
import { publicVoices } from "./engines/espeak/public-voices.js";
import { AdapterRegistry } from "./engines/registry.js";
import { GovernanceCache } from "./governance-cache.js";
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
}

/** SpeechService on its own gRPC port, with the embedded engine's worker pool. */
export async function startSpeechServer(
  store: Store,
  port: number,
  host?: string,
  options: SpeechServerOptions = {},
): Promise<ServedServices> {
  const env = options.env ?? process.env;
  const catalog = loadCatalog(env);
  const engine = await EspeakEngine.start({ poolSize: options.enginePoolSize });
  try {
    const models = new ModelCatalog(
      catalog,
      publicVoices(engine.voices()).map((v) => ({
        id: v.id,
        name: v.name,
        languages: v.languages,
      })),
    );
    const adapters = new AdapterRegistry({ catalog, engine, env });
    const governance = new GovernanceCache(store, accountSettings(env));
    const service = new SpeechServiceImpl({
      store,
      catalog: models,
      adapters,
      governance,
      metering: { rateLimitPerMinute: Number(env.RATE_LIMIT_PER_MINUTE ?? 600) },
    });
    // Synthesize and GetGeneration need a standard key, ListModels nothing,
    // Explain (the default) a management key.
    const server = await startGrpcServer([served(SpeechService, service)], port, host, {
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
          },
        }),
      ],
    });
    log.info(
      { models: catalog.models.map((m) => m.id), voices: engine.voices().length },
      "speech catalog loaded",
    );
    return {
      port: server.port,
      inProcess: server.inProcess,
      close: async () => {
        await server.close();
        governance.close();
        await Promise.all([engine.close(), adapters.close()]);
      },
    };
  } catch (err) {
    await engine.close();
    throw err;
  }
}
