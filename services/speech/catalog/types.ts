/** What an endpoint can do; a request is routed only to endpoints that can do what it asks. */
export interface EndpointCapabilities {
  speed: boolean;
  multi_speaker: boolean;
  instructions: boolean;
  voice_cloning: boolean;
  /** Most reference clips one request may carry (voice cloning). */
  max_references: number;
  image_reference: boolean;
}

/** How an endpoint treats request data (the guardrail and data-policy filters read these). */
export interface EndpointDataPolicy {
  zero_data_retention: boolean;
  /** May retain prompts for safety monitoring. */
  safety_retention: boolean;
  trains_on_data: boolean;
  publishes_prompts: boolean;
}

export interface CatalogEndpoint {
  /** Provider id, as guardrails name it in allowed/ignored_providers. */
  provider: string;
  /** The adapter serving it: a key of the adapter registry. */
  adapter: string;
  /** The model id the upstream knows (upstream adapters only; defaults to the part after the vendor prefix). */
  upstream_model?: string;
  price_per_million_chars: number;
  capabilities: EndpointCapabilities;
  data_policy: EndpointDataPolicy;
  /** Served with the caller's own provider key. */
  byok: boolean;
}

export interface CatalogVoice {
  id: string;
  name: string;
  languages: string[];
}

export interface CatalogModel {
  /** Vendor-prefixed id, e.g. "openai/gpt-4o-mini-tts"; the prefix decides the ZDR vendor. */
  id: string;
  /** Other ids that address the same model (canonical slugs). */
  aliases: string[];
  name: string;
  description: string;
  /**
   * When the model was published (ISO 8601 date), shown as `created` in /models. Optional in a
   * catalog file; a model without it shows the time its catalog was loaded.
   */
  created?: string;
  /** Explicit voices, or "engine" to take every voice the embedded engine offers. */
  voices: CatalogVoice[] | "engine";
  endpoints: CatalogEndpoint[];
}

/** An upstream provider: where it is and how to authenticate. */
export interface ProviderConfig {
  adapter: string;
  base_url: string;
  /** Name of the environment variable that holds the API key (never the key itself). */
  api_key_env?: string;
  /** Per-request timeout until the first byte and between bytes. */
  timeout_ms: number;
}

export interface Catalog {
  providers: Record<string, ProviderConfig>;
  models: CatalogModel[];
}
