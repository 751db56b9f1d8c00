import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Voice } from "../../gen/railgate/speech/v1/speech_pb.js";
import type { Catalog, CatalogModel } from "./types.js";

/**
 * The loaded catalog with the lookups the service needs. Its models are complete as ListModels
 * shows them: "engine" models carry the engine's voices, and a model whose entry gives no
 * publication date carries the catalog's load time, so `created` is stable while it runs.
 */
export class ModelCatalog {
  private readonly list: CatalogModel[];
  private readonly byId = new Map<string, CatalogModel>();
  private readonly voiceSets = new Map<string, Set<string>>();
  /** When this catalog was loaded: the `created` time of models whose entry gives none. */
  readonly loadedAt = new Date();

  constructor(catalog: Catalog, engineVoices: Voice[]) {
    const loaded = timestampFromDate(this.loadedAt);
    this.list = catalog.models.map((m) => ({
      ...m,
      createdAt: m.createdAt ?? loaded,
      voices: catalog.engineVoiced.has(m.id) ? engineVoices : m.voices,
    }));
    for (const m of this.list) {
      for (const id of [m.id, ...m.aliases]) this.byId.set(id, m);
      this.voiceSets.set(m.id, new Set(m.voices.map((v) => v.id)));
    }
  }

  models(): CatalogModel[] {
    return this.list;
  }

  /** By id or alias (slug or canonical slug). */
  find(id: string): CatalogModel | undefined {
    return this.byId.get(id);
  }

  hasVoice(model: CatalogModel, voice: string): boolean {
    return this.voiceSets.get(model.id)?.has(voice) ?? false;
  }
}
