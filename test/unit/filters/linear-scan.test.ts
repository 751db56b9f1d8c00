import { expect } from "chai";
import { RE2JS } from "re2js";
import type { Span } from "../../../governance/filters/detectors/detector.js";
import {
  canMatchEmpty,
  findMatches,
  type ScanStats,
} from "../../../governance/filters/detectors/linear-scan.js";
import { CompiledFilters, type FilterRule } from "../../../governance/filters/index.js";

/**
 * What re2js itself reports: find() from the end of each match (one past an
 * empty one), empty matches dropped. Quadratic on adversarial input, so only
 * used on short texts as the reference the linear scan must agree with.
 */
function reference(re: RE2JS, text: string): Span[] {
  const m = re.matcher(text);
  const spans: Span[] = [];
  let from = 0;
  while (from <= text.length && m.find(from)) {
    const start = m.start();
    const end = m.end();
    from = end > start ? end : end + 1;
    if (end > start) spans.push({ start, end });
  }
  return spans;
}

function stepsFor(pattern: string, text: string): { spans: Span[]; steps: number; size: number } {
  const re = RE2JS.compile(pattern);
  const stats: ScanStats = { steps: 0 };
  const spans = findMatches(re, text, stats);
  return { spans, steps: stats.steps, size: re.programSize() };
}

/** A small deterministic generator, so a failure can be replayed. */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const ADVERSARIAL = ["(.*x)?", "(a|aa)*b", "x.*y|x", ".*.*.*="];

describe("linear scan (findMatches)", () => {
  it("agrees with re2js's own find loop on non-empty matches", () => {
    const patterns = [
      "x.*y|x",
      "(a|aa)*b",
      ".*.*.*=",
      "a+",
      "ab|a",
      "a|ab",
      "(?:ab)+?",
      "a.*?b",
      "\\bax\\b",
      "\\Bx",
      "(?m)^a|b$",
      "^a",
      "y$",
      "(?i)AX",
      "[^\\n]{2,3}",
      "(?s)a.+=",
      "x(?:y|)=?",
      "é+|😀",
      "(a|b)*?=",
    ];
    const alphabet = ["a", "b", "x", "y", " ", "\n", "=", "A", "é", "😀"];
    const random = seeded(7);
    for (const pattern of patterns) {
      const re = RE2JS.compile(pattern);
      for (let i = 0; i < 60; i++) {
        const length = Math.floor(random() * 24);
        let text = "";
        for (let k = 0; k < length; k++) text += alphabet[Math.floor(random() * alphabet.length)];
        expect(findMatches(re, text), `${pattern} on ${JSON.stringify(text)}`).to.deep.equal(
          reference(re, text),
        );
      }
    }
  });

  it("finds leftmost-longest matches for a LONGEST_MATCH pattern", () => {
    const re = RE2JS.compile("a|ab|abc", RE2JS.LONGEST_MATCH);
    expect(findMatches(re, "abc ab a abcabc")).to.deep.equal(reference(re, "abc ab a abcabc"));
    expect(findMatches(re, "abc")).to.deep.equal([{ start: 0, end: 3 }]);
  });

  it("never reports an empty match, and still finds the non-empty ones", () => {
    expect(findMatches(RE2JS.compile("x*"), "abxxc")).to.deep.equal([{ start: 2, end: 4 }]);
    expect(findMatches(RE2JS.compile("(.*x)?"), "a".repeat(50))).to.deep.equal([]);
    expect(findMatches(RE2JS.compile("(?:ab)*?"), "ababc")).to.deep.equal([
      { start: 0, end: 2 },
      { start: 2, end: 4 },
    ]);
  });

  it("does work linear in the text on the adversarial patterns (the reproducer included)", () => {
    const texts = (n: number) => ["a".repeat(n), "x".repeat(n), "xa=\n".repeat(n / 4)];
    for (const pattern of ADVERSARIAL) {
      for (const [i, small] of texts(10_000).entries()) {
        const large = texts(20_000)[i] as string;
        const at10k = stepsFor(pattern, small);
        const at20k = stepsFor(pattern, large);
        const label = `${pattern} on text ${i}`;
        // At most about two visits per (position, instruction)...
        expect(at10k.steps, label).to.be.at.most(2 * (small.length + 1) * at10k.size);
        // ...so twice the text costs twice the work, not four times.
        expect(at20k.steps, label).to.be.at.most(2.1 * at10k.steps);
      }
    }
  });

  it("the reproducer: (.*x)? finds nothing in 10,000 characters without an x, x.*y|x every x", () => {
    expect(stepsFor("(.*x)?", "a".repeat(10_000)).spans).to.deep.equal([]);
    const xs = stepsFor("x.*y|x", "x".repeat(10_000));
    expect(xs.spans).to.have.length(10_000);
    expect(xs.spans[9_999]).to.deep.equal({ start: 9_999, end: 10_000 });
    const withY = stepsFor("x.*y|x", `${"x".repeat(9_999)}y`);
    expect(withY.spans).to.deep.equal([{ start: 0, end: 10_000 }]);
  });

  it("ten (.*x)? redact filters over 10,000 characters redact the right stretches", () => {
    const rules: FilterRule[] = Array.from({ length: 10 }, (_, i) => ({
      slug: "custom",
      action: "redact",
      label: `[R${i}]`,
      pattern: `(.*x${i})?`,
    }));
    const text = `${"a".repeat(9_990)} x3 tail`;
    const result = CompiledFilters.compile(rules).apply([{ text, role: "user" }]);
    expect(result.parts[0]?.text).to.equal("[R3] tail");
    expect(result.outcomes).to.deep.equal([
      { slug: "custom", label: "[R3]", action: "redact", count: 1 },
    ]);
  });

  it("steps over surrogate pairs as whole characters", () => {
    expect(findMatches(RE2JS.compile("."), "a😀")).to.deep.equal([
      { start: 0, end: 1 },
      { start: 1, end: 3 },
    ]);
  });
});

describe("canMatchEmpty", () => {
  it("is true for patterns that can match nothing, in any context", () => {
    for (const p of ["a*", "(.*x)?", "x|", "\\b", "^", "(?m)$", "(?:a|b?)", "(?i)(ab)*", "\\B"])
      expect(canMatchEmpty(RE2JS.compile(p)), p).to.equal(true);
  });

  it("is false for patterns that always consume a character", () => {
    for (const p of ["a", "x.*y|x", "(a|aa)*b", ".*.*.*=", "\\bword\\b", "^a", "a+$", "(?m)^x"])
      expect(canMatchEmpty(RE2JS.compile(p)), p).to.equal(false);
  });
});
