import { create } from "@bufbuild/protobuf";
import {
  type Guardrail,
  type StringList,
  StringListSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";

/** What this table reads of a catalog's model. */
export interface CatalogModelIds {
  id: string;
  aliases: readonly string[];
}

/**
 * Model ids as guardrails store them: a client may name a model by any alias
 * (slug or canonical slug, as OpenRouter accepts), and the guardrail keeps
 * the canonical id, as OpenRouter does.
 *
 * Where the alias table comes from: the speech catalog modules
 * (services/speech/catalog/load-catalog.ts, default-catalog.ts) are plain
 * data — no engine, no network — so the guardrail container loads the same
 * catalog document SpeechService loads (RAILGATE_SPEECH_CATALOG_FILE, or the built-in
 * one; apps/control-plane/server.ts) and gives this table only its ids and aliases. Asking SpeechService over gRPC
 * instead would make every guardrail write depend on a second service being
 * up. Should the two processes ever load different catalogs, nothing is
 * enforced wrongly: enforcement (speech/policy-rules.ts) compares a model's
 * id and every alias with each guardrail's list, so only the stored spelling
 * of an unknown alias would differ. Ids the catalog does not know are kept
 * as given (a guardrail may name a model that is added later).
 */
export class ModelIds {
  private readonly canonicalById = new Map<string, string>();

  constructor(catalog: { models: readonly CatalogModelIds[] }) {
    for (const m of catalog.models) {
      for (const id of [m.id, ...m.aliases]) this.canonicalById.set(id, m.id);
    }
  }

  canonical(id: string): string {
    return this.canonicalById.get(id) ?? id;
  }

  /** Canonical ids in the order given, each once (an alias and its id name one model). */
  canonicalList(ids: readonly string[]): string[] {
    return [...new Set(ids.map((id) => this.canonical(id)))];
  }

  /**
   * Gives a guardrail canonical model lists (allowed and ignored). The lists
   * are replaced, never written to: they may be the request's own objects.
   */
  canonicalize(g: Guardrail): Guardrail {
    const list = (l: StringList | undefined) =>
      l && create(StringListSchema, { values: this.canonicalList(l.values) });
    g.allowedModels = list(g.allowedModels);
    g.ignoredModels = list(g.ignoredModels);
    return g;
  }
}
