import type {
  Capabilities,
  DataPolicy,
  Endpoint,
  Model,
} from "../../gen/railgate/speech/v1/speech_pb.js";

/*
 * The catalog in memory is the speech proto's messages (Model, Endpoint, Capabilities,
 * DataPolicy, Voice): their fields are the one statement of its shape, and ListModels answers
 * with them as they are. The catalog file's snake_case is the loader's to read
 * (services/speech/catalog/load-catalog.ts).
 */

/**
 * An endpoint as the catalog holds it. The loader always sets its capabilities and data policy,
 * which a message leaves optional; saying so here spares every rule a `?.` per request.
 */
export type CatalogEndpoint = Endpoint & { capabilities: Capabilities; dataPolicy: DataPolicy };

/** A model as the catalog holds it: every endpoint a CatalogEndpoint. */
export type CatalogModel = Omit<Model, "endpoints"> & { endpoints: CatalogEndpoint[] };

/** An upstream provider: where it is and how to authenticate. Only in the catalog file. */
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
  /**
   * The models whose file entry says `"voices": "engine"`: their voices are the embedded
   * engine's, known once it has started (ModelCatalog fills them in); until then, none.
   */
  engineVoiced: ReadonlySet<string>;
}

/**
 * Where the speech catalog comes from (validated configuration: RAILGATE_SPEECH_CATALOG_FILE,
 * OPENAI_API_KEY, OPENAI_BASE_URL): a catalog file, else the built-in catalog, which lists
 * OpenAI's models when `openAi` is set.
 */
export interface CatalogSource {
  file?: string;
  openAi?: { baseUrl?: string };
}
