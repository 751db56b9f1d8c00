import { expect } from "chai";
import { RE2JS } from "re2js";
import { PatternSet } from "../../../governance/filters/detectors/pattern-set.js";
import { CompiledFilters, type FilterRule } from "../../../governance/filters/index.js";

/** The bench's operator patterns and a few that exercise flags, anchors and classes. */
const PATTERNS = [
  "\\bproject[- ]?(falcon|heron|osprey)\\b",
  "(?i)internal use only",
  "(?i)\\bconfidential\\b",
  "\\bAKIA[0-9A-Z]{16}\\b",
  "\\bsk-[A-Za-z0-9]{20,}\\b",
  "(?i)\\bpassword\\s*[:=]\\s*\\S+",
  "\\b[A-Z]{2}\\d{2}[A-Z0-9]{11,30}\\b",
  "\\b\\d{3}-\\d{3}-\\d{3}\\b",
  "(?i)\\bsalary\\b.*\\$\\d+",
  "\\b[0-9a-f]{32}\\b",
  "^start",
  "end$",
  "(?m)^line two$",
  "(?s)alpha.beta",
  "caf\u00e9",
  "\\p{Greek}+",
  "\u{1F600}",
  "x*",
  "\\Bing\\b",
];

const TEXTS = [
  "",
  "The old lighthouse stood at the edge of the harbor for more than a century.",
  "Ship project falcon by Friday; INTERNAL USE ONLY. Confidential!",
  "key AKIAABCDEFGHIJKLMNOP and sk-abcdefghijklmnopqrstuvwx here",
  "Password = hunter2 and salary of $120000 for 123-456-789",
  "GB82WEST12345698765432 0123456789abcdef0123456789abcdef",
  "start of a text that has an end",
  "line one\nline two\nline three",
  "alpha\nbeta and caf\u00e9 \u03b1\u03b2\u03b3 \u{1F600} singing",
  "\u{1F600}\u{1F601} unpaired \ud800 surrogate \udc00 end",
];

describe("pattern sets", () => {
  it("names exactly the members whose own test matches, on every text", () => {
    const res = PATTERNS.map((p) => RE2JS.compile(p));
    const set = PatternSet.of(res);
    expect(set, "the patterns run as one set").to.not.equal(undefined);
    for (const text of TEXTS) {
      const answer = set?.matching(text, Number.POSITIVE_INFINITY);
      expect(answer).to.be.instanceOf(Uint8Array);
      const got = [...(answer as Uint8Array)].map((x) => x === 1);
      expect(got, JSON.stringify(text)).to.deep.equal(res.map((re) => re.test(text)));
    }
  });

  it("keeps each member's flags (case-insensitive, longest match)", () => {
    const res = [
      RE2JS.compile("secret", RE2JS.CASE_INSENSITIVE),
      RE2JS.compile("a|ab", RE2JS.LONGEST_MATCH),
      RE2JS.compile("^two", RE2JS.MULTILINE),
    ];
    const answer = PatternSet.of(res)?.matching("SECRET\ntwo", Number.POSITIVE_INFINITY);
    expect([...(answer as Uint8Array)]).to.deep.equal([1, 0, 1]);
  });

  it("answers late, without an answer, once its deadline passed", () => {
    const set = PatternSet.of([RE2JS.compile("q[a-z]{9}z"), RE2JS.compile("w[0-9]{7}")]);
    // A fresh set has no states cached: the first step builds one, after looking at the clock.
    expect(set?.matching("abc".repeat(1000), performance.now() - 1)).to.equal("late");
  });

  it("leaves every outcome of a filter set as testing each pattern alone leaves it", () => {
    const rules: FilterRule[] = PATTERNS.map((pattern, i) => ({
      slug: "custom",
      action: i % 3 === 0 ? "redact" : "flag",
      label: `[P${i}]`,
      pattern,
    }));
    const together = CompiledFilters.compile(rules);
    const alone = rules.map((r) => CompiledFilters.compile([r]));
    for (const text of TEXTS) {
      const parts = [{ text, role: "user" as const }];
      const outcomes = together.apply(parts).outcomes;
      const expected = alone.flatMap((f) => f.apply(parts).outcomes);
      expect(outcomes, JSON.stringify(text)).to.deep.equal(expected);
    }
  });
});
