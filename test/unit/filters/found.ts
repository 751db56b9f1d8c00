import { BUILTIN_FILTERS } from "../../../governance/filters/detectors/builtins.js";

/** The stretches of `text` the builtin `slug` detects, in order. */
export function found(slug: string, text: string): string[] {
  const builtin = BUILTIN_FILTERS.get(slug);
  if (!builtin) throw new Error(`no builtin ${slug}`);
  return builtin.detector.find(text).map((s) => text.slice(s.start, s.end));
}
