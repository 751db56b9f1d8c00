import type { Catalog, CatalogModel, CatalogVoice } from "./types.js";

/** The loaded catalog with the lookups the service needs; voices of "engine" models come from the engine. */
export class ModelCatalog {
  private readonly byId = new Map<string, CatalogModel>();
  private readonly voiceSets = new Map<string, Set<string>>();
  /** When this catalog was loaded: the `created` time of models whose entry gives none. */
  readonly loadedAt = new Date();

  constructor(
    readonly catalog: Catalog,
    private readonly engineVoices: CatalogVoice[],
  ) {
    for (const m of catalog.models) {
      for (const id of [m.id, ...m.aliases]) this.byId.set(id, m);
      this.voiceSets.set(m.id, new Set(this.voices(m).map((v) => v.id)));
    }
  }

  models(): CatalogModel[] {
    return this.catalog.models;
  }

  /** By id or alias (slug or canonical slug). */
  find(id: string): CatalogModel | undefined {
    return this.byId.get(id);
  }

  voices(model: CatalogModel): CatalogVoice[] {
    return model.voices === "engine" ? this.engineVoices : model.voices;
  }

  hasVoice(model: CatalogModel, voice: string): boolean {
    return this.voiceSets.get(model.id)?.has(voice) ?? false;
  }
}
