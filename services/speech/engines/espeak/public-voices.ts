import type { EspeakVoice } from "./espeak-wasm.js";

export interface PublicVoice {
  /** What clients send as `voice`. */
  id: string;
  /** What eSpeak's set_voice takes. */
  engineId: string;
  name: string;
  languages: string[];
}

/**
 * OpenAI's voice names, so an OpenAI client pointed at Railgate works with
 * its usual `voice` values; each maps to one of eSpeak's English accents.
 */
const OPENAI_ALIASES: Record<string, string> = {
  alloy: "en-us",
  ash: "en-gb-x-gbclan",
  ballad: "en-gb-x-gbcwmd",
  coral: "en-us-nyc",
  echo: "en-gb",
  fable: "en-gb-x-rp",
  nova: "en-gb-scotland",
  onyx: "en-029",
  sage: "en-gb",
  shimmer: "en-us",
  verse: "en-gb-x-rp",
};

/**
 * eSpeak's own ids ("gmw/en-US") are family-qualified; clients address a
 * voice by its primary language tag ("en-us") instead, or by an OpenAI alias.
 */
export function publicVoices(engine: EspeakVoice[]): PublicVoice[] {
  const out: PublicVoice[] = [];
  const taken = new Set<string>();
  for (const v of engine) {
    const tag = (v.languages[0] ?? v.id).toLowerCase();
    const id = taken.has(tag) ? v.id : tag;
    taken.add(id);
    out.push({ id, engineId: v.id, name: v.name, languages: v.languages });
  }
  const byTag = new Map(out.map((v) => [v.id, v]));
  for (const [alias, tag] of Object.entries(OPENAI_ALIASES)) {
    const target = byTag.get(tag);
    if (target && !taken.has(alias)) {
      out.push({ ...target, id: alias, name: `${alias} (${target.name})` });
      taken.add(alias);
    }
  }
  return out;
}
