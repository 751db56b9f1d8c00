import type { Catalog, CatalogEndpoint } from "../../../domain/catalog/types.js";
import { EspeakAdapter } from "./espeak/adapter.js";
import type { EspeakEngine } from "./espeak/engine.js";
import { OpenAiCompatibleAdapter } from "./openai-compatible/adapter.js";
import type { SpeechAdapter } from "./types.js";

export interface AdapterDeps {
  catalog: Catalog;
  /** Absent when the embedded engine is not available (its endpoints are then not in the catalog). */
  engine?: EspeakEngine;
  env: NodeJS.ProcessEnv;
}

/**
 * Every engine and upstream adapter, by the name catalog endpoints use.
 * Adding a provider: one folder under engines/ and one line here.
 */
const FACTORIES: Record<string, (provider: string, deps: AdapterDeps) => SpeechAdapter> = {
  espeak: (_provider, deps) => {
    if (!deps.engine) throw new Error("the embedded engine (eSpeak NG) is not available");
    return new EspeakAdapter(deps.engine);
  },
  "openai-compatible": (provider, deps) => {
    const config = deps.catalog.providers[provider];
    if (!config) throw new Error(`provider ${provider} has no configuration`);
    return new OpenAiCompatibleAdapter(provider, config, deps.env);
  },
};

export class AdapterRegistry {
  private readonly cache = new Map<string, SpeechAdapter>();

  constructor(private readonly deps: AdapterDeps) {
    for (const m of deps.catalog.models) for (const e of m.endpoints) this.for(e);
  }

  /** The adapter of an endpoint; unknown adapters fail at start-up, not per request. */
  for(endpoint: CatalogEndpoint): SpeechAdapter {
    const id = `${endpoint.adapter}:${endpoint.provider}`;
    let adapter = this.cache.get(id);
    if (!adapter) {
      const factory = FACTORIES[endpoint.adapter];
      if (!factory) {
        throw new Error(
          `unknown adapter "${endpoint.adapter}" (known: ${Object.keys(FACTORIES).join(", ")})`,
        );
      }
      adapter = factory(endpoint.provider, this.deps);
      this.cache.set(id, adapter);
    }
    return adapter;
  }

  /** Closes every adapter's connections (shutdown); one failing does not keep the others open. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.cache.values()].map((a) => a.close?.()));
  }
}
