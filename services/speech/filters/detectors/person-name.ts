import type { Detector, Span } from "./detector.js";
import {
  knownWord,
  lexiconNameWords,
  lexiconTags,
  type Phrase,
  phrases,
  sentences,
  spanOf,
} from "./nlp.js";

const STRONG_NAME_TAGS = new Set(["FirstName", "LastName", "MaleName", "FemaleName", "Honorific"]);
/** Word classes compromise sometimes glues onto a name at a sentence start ("Then Alice"). */
const FUNCTION_WORD_TAGS = new Set([
  "Adverb",
  "Conjunction",
  "Preposition",
  "Determiner",
  "Pronoun",
  "Expression",
  "QuestionWord",
]);

const WORD = /\p{L}[\p{L}\p{M}'’]*/gu;
const CAPITALIZED = /^\p{Lu}/u;

/**
 * Could compromise find a name in this sentence? Parsing costs ~10 µs per
 * character, so sentences that cannot hold one are skipped: compromise finds
 * names from its lexicon (any case) and from capitalization, so a sentence
 * qualifies when a word is a lexicon name, or is capitalized mid-sentence
 * (other than "I"), or starts the sentence capitalized but is unknown to the
 * lexicon ("Kowalski went home."). What this gives up: lowercase names the
 * lexicon does not know, which compromise only sometimes guesses from suffixes.
 */
function mayHoldName(sentence: string): boolean {
  const names = lexiconNameWords();
  let first = true;
  for (const [word] of sentence.matchAll(WORD)) {
    const lower = word.toLowerCase();
    if (names.has(lower)) return true;
    if (CAPITALIZED.test(word)) {
      if (first ? !knownWord(lower) : !lexiconTags(lower).includes("Pronoun")) return true;
    }
    first = false;
  }
  return false;
}

function isFunctionWord(word: Phrase[number]): boolean {
  if (word.tags.some((t) => STRONG_NAME_TAGS.has(t))) return false;
  return lexiconTags(word.text.toLowerCase()).some((t) => FUNCTION_WORD_TAGS.has(t));
}

/** Drops function words compromise attached at either end of a name. */
function trimmed(words: Phrase): Phrase {
  let from = 0;
  let to = words.length;
  while (from < to && isFunctionWord(words[from] as Phrase[number])) from++;
  while (to > from && isFunctionWord(words[to - 1] as Phrase[number])) to--;
  return words.slice(from, to);
}

/**
 * Person names as compromise's NLP tags them (`.people()`): first/last names
 * from its lexicon, capitalized words in name positions, honorific + name
 * ("Dr. Mary O'Brien" is one span), hyphenated surnames. Runs of sentences
 * that may hold a name are analysed together; the rest are skipped.
 * Misses: names compromise does not recognize (uncommon or non-English names
 * at a sentence start, "Taylor Swift" yields only "Taylor"), lowercase names
 * outside its lexicon. May over-match names that are also places or words
 * ("Jordan", "Grace") when context suggests a person.
 */
let warmed = false;

export const personNameDetector: Detector = {
  warm(): void {
    if (warmed) return;
    warmed = true;
    // Builds the name-word set and lets compromise's first parse (tens of ms) happen now.
    lexiconNameWords();
    phrases("Warm up, Ada.", "people");
  },
  find(text: string): Span[] {
    const spans: Span[] = [];
    const analyse = (start: number, end: number) => {
      for (const words of phrases(text.slice(start, end), "people")) {
        const span = spanOf(trimmed(words), start);
        if (span) spans.push(span);
      }
    };
    let run: Span | undefined;
    for (const s of sentences(text)) {
      if (mayHoldName(text.slice(s.start, s.end))) {
        if (run) run.end = s.end;
        else run = { ...s };
      } else if (run) {
        analyse(run.start, run.end);
        run = undefined;
      }
    }
    if (run) analyse(run.start, run.end);
    return spans;
  },
};
