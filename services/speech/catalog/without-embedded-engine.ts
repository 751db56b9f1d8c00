import type { Catalog } from "../../../domain/catalog/types.js";

/** The adapter of the embedded eSpeak NG engine in catalog endpoints. */
export const EMBEDDED_ADAPTER = "espeak";

export interface TrimmedCatalog {
  catalog: Catalog;
  /** Models served only by the embedded engine: left out entirely. */
  skippedModels: string[];
  /** Models that keep their other endpoints and lose the embedded one. */
  trimmedModels: string[];
}

/**
 * The catalog without the embedded engine's endpoints, for a process that runs without it:
 * a model it alone serves would otherwise be listed and then fail every request.
 */
export function withoutEmbeddedEngine(catalog: Catalog): TrimmedCatalog {
  const skippedModels: string[] = [];
  const trimmedModels: string[] = [];
  const models = catalog.models.flatMap((model) => {
    const endpoints = model.endpoints.filter((e) => e.adapter !== EMBEDDED_ADAPTER);
    if (endpoints.length === model.endpoints.length) return [model];
    if (endpoints.length === 0) {
      skippedModels.push(model.id);
      return [];
    }
    trimmedModels.push(model.id);
    return [{ ...model, endpoints }];
  });
  return {
    catalog: { providers: catalog.providers, models, engineVoiced: catalog.engineVoiced },
    skippedModels,
    trimmedModels,
  };
}
