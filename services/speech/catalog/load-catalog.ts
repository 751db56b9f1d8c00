import { readFileSync } from "node:fs";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  AUDIO_FORMAT_NAMES,
  type AudioFormatName,
  audioFormatValue,
  formatList,
  isAudioFormatName,
} from "../../../domain/audio-formats.js";
import type {
  Catalog,
  CatalogEndpoint,
  CatalogModel,
  CatalogSource,
  ProviderConfig,
} from "../../../domain/catalog/types.js";
import {
  type AudioFormat,
  CapabilitiesSchema,
  DataPolicySchema,
  EndpointSchema,
  ModelSchema,
  type Voice,
  VoiceSchema,
} from "../../../gen/railgate/speech/v1/speech_pb.js";
import { defaultCatalogDocument } from "./default-catalog.js";

/** Adapters that run in-process and need no provider entry. */
const ENGINE_ADAPTERS = new Set(["espeak"]);

/**
 * What an endpoint that does not list its formats produces: what every endpoint served before
 * endpoints declared formats (an OpenAI-compatible server's common ground).
 */
export const DEFAULT_ENDPOINT_FORMATS: readonly AudioFormatName[] = ["mp3", "wav", "pcm"];

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

/** The catalog's formats as the proto enum, in the table's order. */
function formatValues(names: readonly AudioFormatName[]): AudioFormat[] {
  return AUDIO_FORMAT_NAMES.filter((name) => names.includes(name)).flatMap(
    (name) => audioFormatValue(name) ?? [],
  );
}

function formats(v: unknown, at: string): AudioFormat[] {
  if (v === undefined) return formatValues(DEFAULT_ENDPOINT_FORMATS);
  if (!Array.isArray(v) || v.length === 0) {
    throw new CatalogError(`${at} must be a non-empty array of ${formatList()}`);
  }
  v.forEach((f, i) => {
    if (!isAudioFormatName(f)) {
      throw new CatalogError(
        `${at}[${i}] must be one of ${formatList()}, got ${JSON.stringify(f)}`,
      );
    }
  });
  // Railgate makes WAV itself, from the endpoint's PCM behind a header.
  if (v.includes("wav") && !v.includes("pcm")) {
    throw new CatalogError(`${at} lists "wav" without "pcm": wav is made from the endpoint's pcm`);
  }
  // In the table's order, each once, whatever order the file lists them in.
  return formatValues(v);
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
  // In the order these fields were always checked: an entry with several problems reports the same first one.
  const upstreamModel =
    e.upstream_model === undefined ? "" : str(e.upstream_model, `${at}.upstream_model`);
  const pricePerMillionChars = num(e.price_per_million_chars, `${at}.price_per_million_chars`);
  const capabilities = create(CapabilitiesSchema, {
    speed: bool(c.speed, `${at}.capabilities.speed`),
    multiSpeaker: bool(c.multi_speaker, `${at}.capabilities.multi_speaker`),
    instructions: bool(c.instructions, `${at}.capabilities.instructions`),
    voiceCloning: bool(c.voice_cloning, `${at}.capabilities.voice_cloning`),
    maxReferences: num(
      c.max_references,
      `${at}.capabilities.max_references`,
      c.voice_cloning ? 1 : 0,
    ),
    imageReference: bool(c.image_reference, `${at}.capabilities.image_reference`),
  });
  const dataPolicy = create(DataPolicySchema, {
    zeroDataRetention: bool(d.zero_data_retention, `${at}.data_policy.zero_data_retention`),
    safetyRetention: bool(d.safety_retention, `${at}.data_policy.safety_retention`),
    trainsOnData: bool(d.trains_on_data, `${at}.data_policy.trains_on_data`),
    publishesPrompts: bool(d.publishes_prompts, `${at}.data_policy.publishes_prompts`),
  });
  const endpoint = create(EndpointSchema, {
    provider,
    kind: ENGINE_ADAPTERS.has(adapter) ? "engine" : "upstream",
    adapter,
    upstreamModel,
    pricePerMillionChars,
    byok: bool(e.byok, `${at}.byok`),
    formats: formats(e.formats, `${at}.formats`),
  });
  return Object.assign(endpoint, { capabilities, dataPolicy });
}

/** A model entry; `engineVoiced` collects the ids of those whose voices are the engine's. */
function parseModel(
  raw: unknown,
  at: string,
  providers: Catalog["providers"],
  engineVoiced: Set<string>,
): CatalogModel {
  const m = obj(raw, at);
  const id = str(m.id, `${at}.id`);
  if (!/^[a-z0-9][a-z0-9._-]*\/[A-Za-z0-9._:-]+$/.test(id)) {
    throw new CatalogError(
      `${at}.id "${id}" must be "<vendor>/<model>" (the vendor prefix decides ZDR rules)`,
    );
  }
  const voicesRaw = m.voices;
  let voices: Voice[] = [];
  if (voicesRaw === "engine") engineVoiced.add(id);
  else {
    if (!Array.isArray(voicesRaw) || voicesRaw.length === 0) {
      throw new CatalogError(`${at}.voices must be "engine" or a non-empty array`);
    }
    voices = voicesRaw.map((v, i) => {
      const o = typeof v === "string" ? { id: v } : obj(v, `${at}.voices[${i}]`);
      const vid = str(o.id, `${at}.voices[${i}].id`);
      return create(VoiceSchema, {
        id: vid,
        name: typeof o.name === "string" ? o.name : vid,
        languages: Array.isArray(o.languages) ? o.languages.map(String) : [],
      });
    });
  }
  if (!Array.isArray(m.endpoints) || m.endpoints.length === 0) {
    throw new CatalogError(`${at}.endpoints must be a non-empty array`);
  }
  const aliases = Array.isArray(m.aliases)
    ? m.aliases.map((a, i) => str(a, `${at}.aliases[${i}]`))
    : [];
  const name = typeof m.name === "string" ? m.name : id;
  const description = typeof m.description === "string" ? m.description : "";
  // Without a date the model stays without one here: ModelCatalog gives it the load time.
  const createdAt =
    m.created === undefined
      ? undefined
      : timestampFromDate(new Date(isoDate(m.created, `${at}.created`)));
  const endpoints = m.endpoints.map((e, i) => parseEndpoint(e, `${at}.endpoints[${i}]`, providers));
  return Object.assign(create(ModelSchema, { id, aliases, name, description, createdAt, voices }), {
    endpoints,
  });
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
  const engineVoiced = new Set<string>();
  const models = root.models.map((m, i) => parseModel(m, `models[${i}]`, providers, engineVoiced));
  const seen = new Set<string>();
  for (const m of models) {
    for (const id of [m.id, ...m.aliases]) {
      if (seen.has(id)) throw new CatalogError(`model id or alias "${id}" appears twice`);
      seen.add(id);
    }
  }
  return { providers, models, engineVoiced };
}

/** The built-in catalog: eSpeak NG, and OpenAI's models when `openAi` is given (a key is set). */
export function defaultCatalog(openAi?: CatalogSource["openAi"]): Catalog {
  return parseCatalog(defaultCatalogDocument(openAi));
}

/** The catalog file when one is set (a JSON document, see docs/configuration.md), else the built-in default. */
export function loadCatalog(source: CatalogSource): Catalog {
  const file = source.file;
  if (!file) return defaultCatalog(source.openAi);
  try {
    return parseCatalog(JSON.parse(readFileSync(file, "utf8")));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`speech catalog ${file}: ${why}`);
  }
}
