import { readFileSync } from "node:fs";
import { defaultCatalog } from "./default-catalog.js";
import type { Catalog, CatalogEndpoint, CatalogModel, ProviderConfig } from "./types.js";

/** Adapters that run in-process and need no provider entry. */
const ENGINE_ADAPTERS = new Set(["espeak"]);

class CatalogError extends Error {}

function obj(v: unknown, at: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new CatalogError(`${at} must be an object`);
  return v as Record<string, unknown>;
}
function str(v: unknown, at: string): string {
  if (typeof v !== "string" || v.length === 0)
    throw new CatalogError(`${at} must be a non-empty string`);
  return v;
}
function bool(v: unknown, at: string, fallback = false): boolean {
  if (v === undefined) return fallback;
  if (typeof v !== "boolean") throw new CatalogError(`${at} must be true or false`);
  return v;
}
function num(v: unknown, at: string, fallback?: number): number {
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0)
    throw new CatalogError(`${at} must be a number >= 0`);
  return v;
}

function parseEndpoint(raw: unknown, at: string, providers: Catalog["providers"]): CatalogEndpoint {
  const e = obj(raw, at);
  const adapter = str(e.adapter, `${at}.adapter`);
  const provider = str(e.provider, `${at}.provider`);
  if (!ENGINE_ADAPTERS.has(adapter) && !providers[provider]) {
    throw new CatalogError(
      `${at}.provider "${provider}" has no entry in "providers" (needed by adapter "${adapter}")`,
    );
  }
  const c = obj(e.capabilities ?? {}, `${at}.capabilities`);
  const d = obj(e.data_policy ?? {}, `${at}.data_policy`);
  return {
    provider,
    adapter,
    upstream_model:
      e.upstream_model === undefined ? undefined : str(e.upstream_model, `${at}.upstream_model`),
    price_per_million_chars: num(e.price_per_million_chars, `${at}.price_per_million_chars`),
    capabilities: {
      speed: bool(c.speed, `${at}.capabilities.speed`),
      multi_speaker: bool(c.multi_speaker, `${at}.capabilities.multi_speaker`),
      instructions: bool(c.instructions, `${at}.capabilities.instructions`),
      voice_cloning: bool(c.voice_cloning, `${at}.capabilities.voice_cloning`),
      max_references: num(
        c.max_references,
        `${at}.capabilities.max_references`,
        c.voice_cloning ? 1 : 0,
      ),
      image_reference: bool(c.image_reference, `${at}.capabilities.image_reference`),
    },
    data_policy: {
      zero_data_retention: bool(d.zero_data_retention, `${at}.data_policy.zero_data_retention`),
      safety_retention: bool(d.safety_retention, `${at}.data_policy.safety_retention`),
      trains_on_data: bool(d.trains_on_data, `${at}.data_policy.trains_on_data`),
      publishes_prompts: bool(d.publishes_prompts, `${at}.data_policy.publishes_prompts`),
    },
    byok: bool(e.byok, `${at}.byok`),
  };
}

function parseModel(raw: unknown, at: string, providers: Catalog["providers"]): CatalogModel {
  const m = obj(raw, at);
  const id = str(m.id, `${at}.id`);
  if (!/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9._:-]+$/.test(id)) {
    throw new CatalogError(
      `${at}.id "${id}" must be "<vendor>/<model>" (the vendor prefix decides ZDR rules)`,
    );
  }
  const voicesRaw = m.voices;
  let voices: CatalogModel["voices"];
  if (voicesRaw === "engine") voices = "engine";
  else {
    if (!Array.isArray(voicesRaw) || voicesRaw.length === 0) {
      throw new CatalogError(`${at}.voices must be "engine" or a non-empty array`);
    }
    voices = voicesRaw.map((v, i) => {
      const o = typeof v === "string" ? { id: v } : obj(v, `${at}.voices[${i}]`);
      const vid = str(o.id, `${at}.voices[${i}].id`);
      return {
        id: vid,
        name: typeof o.name === "string" ? o.name : vid,
        languages: Array.isArray(o.languages) ? o.languages.map(String) : [],
      };
    });
  }
  if (!Array.isArray(m.endpoints) || m.endpoints.length === 0) {
    throw new CatalogError(`${at}.endpoints must be a non-empty array`);
  }
  return {
    id,
    aliases: Array.isArray(m.aliases) ? m.aliases.map((a, i) => str(a, `${at}.aliases[${i}]`)) : [],
    name: typeof m.name === "string" ? m.name : id,
    description: typeof m.description === "string" ? m.description : "",
    created: m.created === undefined ? undefined : isoDate(m.created, `${at}.created`),
    voices,
    endpoints: m.endpoints.map((e, i) => parseEndpoint(e, `${at}.endpoints[${i}]`, providers)),
  };
}

function isoDate(raw: unknown, at: string): string {
  const s = str(raw, at);
  // Date.parse accepts far more than ISO 8601 ("March 1"), so the shape is checked first.
  if (!/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(s) || Number.isNaN(Date.parse(s))) {
    throw new CatalogError(`${at} must be an ISO 8601 date such as "2025-03-20", got "${s}"`);
  }
  return s;
}

function parseProvider(raw: unknown, at: string): ProviderConfig {
  const p = obj(raw, at);
  const base = str(p.base_url, `${at}.base_url`);
  try {
    new URL(base);
  } catch {
    throw new CatalogError(`${at}.base_url "${base}" is not a URL`);
  }
  return {
    adapter: str(p.adapter ?? "openai-compatible", `${at}.adapter`),
    base_url: base.replace(/\/+$/, ""),
    api_key_env: p.api_key_env === undefined ? undefined : str(p.api_key_env, `${at}.api_key_env`),
    timeout_ms: num(p.timeout_ms, `${at}.timeout_ms`, 30_000),
  };
}

/** Parses and checks a catalog document; every problem names its JSON path. */
export function parseCatalog(doc: unknown): Catalog {
  const root = obj(doc, "catalog");
  const providers: Catalog["providers"] = {};
  for (const [id, p] of Object.entries(obj(root.providers ?? {}, "providers"))) {
    providers[id] = parseProvider(p, `providers.${id}`);
  }
  if (!Array.isArray(root.models) || root.models.length === 0) {
    throw new CatalogError("models must be a non-empty array");
  }
  const models = root.models.map((m, i) => parseModel(m, `models[${i}]`, providers));
  const seen = new Set<string>();
  for (const m of models) {
    for (const id of [m.id, ...m.aliases]) {
      if (seen.has(id)) throw new CatalogError(`model id or alias "${id}" appears twice`);
      seen.add(id);
    }
  }
  return { providers, models };
}

/** SPEECH_CATALOG_FILE when set (a JSON document, see README), else the built-in default. */
export function loadCatalog(env: NodeJS.ProcessEnv = process.env): Catalog {
  const file = env.SPEECH_CATALOG_FILE;
  if (!file) return defaultCatalog(env);
  try {
    return parseCatalog(JSON.parse(readFileSync(file, "utf8")));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`speech catalog ${file}: ${why}`);
  }
}
