import { createRequire } from "node:module";
import type NlpModule from "compromise";
import type { Span } from "./detector.js";

type Nlp = typeof NlpModule;
const requireCjs = createRequire(import.meta.url);
let loaded: Nlp | undefined;

/**
 * compromise costs about 40 MB of heap and most of a second to load, so it is
 * loaded on first use (synchronously, through its CommonJS build): processes
 * whose policies never use person-name or address filters never pay for it.
 */
function nlp(): Nlp {
  loaded ??= requireCjs("compromise") as Nlp;
  return loaded;
}

/** The part of compromise's `.json({ terms: { offset: true } })` output we read. */
interface TermJson {
  text: string;
  tags: string[];
  offset: { start: number; length: number };
}
interface MatchJson {
  terms: TermJson[];
}
type Selection = "people" | "places";

/** A phrase compromise found, as its words; offsets are into the analysed text. */
export type Phrase = TermJson[];

/** Runs compromise on `text` and returns each person or place phrase it finds, word by word. */
export function phrases(text: string, what: Selection): Phrase[] {
  const doc = nlp()(text);
  const view = what === "people" ? doc.people() : doc.places();
  return (view.json({ offset: true, terms: { offset: true } }) as MatchJson[]).map((m) => m.terms);
}

/** From the first word's start to the last word's end: punctuation around the phrase stays out. */
export function spanOf(words: Phrase, shift = 0): Span | undefined {
  const first = words[0];
  const last = words[words.length - 1];
  if (!first || !last) return undefined;
  return { start: shift + first.offset.start, end: shift + last.offset.start + last.offset.length };
}

/** What compromise exposes beyond its typed API; every access is guarded. */
interface World {
  model?: { one?: { lexicon?: Record<string, unknown> } };
  methods?: {
    one?: { tokenize?: { splitSentences?: (text: string, world: unknown) => string[] } };
  };
}
let worldCache: World | undefined;
function world(): World {
  worldCache ??= nlp().world() as World;
  return worldCache;
}

function lexicon(): Record<string, unknown> {
  return world().model?.one?.lexicon ?? {};
}

/** The tags compromise's lexicon gives a lowercase word (empty when it does not know it). */
export function lexiconTags(word: string): string[] {
  const words = lexicon();
  const entry = Object.hasOwn(words, word) ? words[word] : undefined;
  if (entry === undefined) return [];
  return Array.isArray(entry) ? entry.map(String) : String(entry).split(",");
}

export function knownWord(word: string): boolean {
  return Object.hasOwn(lexicon(), word);
}

const NAME_TAGS = new Set([
  "Person",
  "FirstName",
  "LastName",
  "MaleName",
  "FemaleName",
  "Honorific",
]);
let nameWords: Set<string> | undefined;

/** Every word the lexicon knows as a name or as part of one ("barack" from "barack obama"), built once. */
export function lexiconNameWords(): Set<string> {
  if (nameWords) return nameWords;
  nameWords = new Set();
  for (const word of Object.keys(lexicon())) {
    if (!lexiconTags(word).some((t) => NAME_TAGS.has(t))) continue;
    // Parts of a multi-word name that are ordinary words ("the" in "the rock") are not names.
    for (const part of word.split(" ")) if (part === word || !knownWord(part)) nameWords.add(part);
  }
  return nameWords;
}

/**
 * compromise's own sentence splitter (the one its parser uses), as offsets
 * into `text`; the whole text as one sentence if this compromise build lacks it.
 */
export function sentences(text: string): Span[] {
  const w = world();
  const split = w.methods?.one?.tokenize?.splitSentences;
  if (typeof split !== "function") return [{ start: 0, end: text.length }];
  const out: Span[] = [];
  let from = 0;
  for (const piece of split(text, w)) {
    const at = text.indexOf(piece, from);
    if (at < 0) return [{ start: 0, end: text.length }];
    out.push({ start: at, end: at + piece.length });
    from = at + piece.length;
  }
  return out;
}
