import { create } from "@bufbuild/protobuf";
import {
  type Guardrail,
  type StringList,
  StringListSchema,
} from "../../gen/railgate/guardrail/v1/guardrail_pb.js";
import { loadCatalog } from "../speech/catalog/load-catalog.js";
import type { Catalog } from "../speech/catalog/types.js";

/**
 * Model ids as guardrails store them: a client may name a model by any alias
 * (slug or canonical slug, as OpenRouter accepts), and the guardrail keeps
 * the canonical id, as OpenRouter does.
 *
 * Where the alias table comes from: the speech catalog modules
 * (services/speech/catalog/load-catalog.ts, default-catalog.ts) are plain
 * data — no engine, no network — so the guardrail service loads the same
 * catalog document SpeechService loads (SPEECH_CATALOG_FILE, or the built-in
 * one) and reads only its ids and aliases. Asking SpeechService over gRPC
 * instead would make every guardrail write depend on a second service being
 * up. Should the two processes ever load different catalogs, nothing is
 * enforced wrongly: enforcement (speech/policy-rules.ts) compares a model's
 * id and every alias with each guardrail's list, so only the stored spelling
 * of an unknown alias would differ. Ids the catalog does not know are kept
 * as given (a guardrail may name a model that is added later).
 */
export class ModelIds {
  private readonly canonicalById = new Map<string, string>();

  constructor(catalog: Pick<Catalog, "models">) {
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

/**
 * The ids and aliases of the catalog SpeechService loads from `env`. An alias
 * names its model whether or not the model's provider is configured in this
 * process (the guardrail service holds no provider keys): the built-in
 * catalog lists its OpenAI models only when OPENAI_API_KEY is present, so it
 * is read here as if it were. The catalog keeps only the variable's name,
 * never its value, so no key is needed or read.
 */
export function loadModelIds(env: NodeJS.ProcessEnv): ModelIds {
  return new ModelIds(loadCatalog({ ...env, OPENAI_API_KEY: env.OPENAI_API_KEY || "-" }));
}
