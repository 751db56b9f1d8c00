import { expect } from "chai";
import { compilePattern } from "../../../governance/filters/detectors/custom-pattern.js";
import { withJsWhitespace } from "../../../governance/filters/detectors/js-whitespace.js";

/** Every code point JavaScript's \s matches, found by asking JavaScript. */
const JS_SPACES: string[] = [];
for (let cp = 0; cp <= 0xffff; cp++) {
  const c = String.fromCharCode(cp);
  if (/\s/.test(c)) JS_SPACES.push(c);
}

describe("custom patterns: \\s and \\S as in JavaScript", () => {
  it("match exactly the characters JavaScript's do, alone, in classes and negated", () => {
    // A sample of others: ASCII, Latin-1, zero-width space, ideographs, an astral character.
    const others = ["a", "0", "_", "\u0085", "\u200b", "\u2060", "\u4e00", "\ufffd", "😀"];
    expect(JS_SPACES).to.include("\u00a0");
    expect(JS_SPACES).to.include("\u3000");
    for (const pattern of [
      "\\s",
      "\\S",
      "[\\s]",
      "[^\\s]",
      "[\\S]",
      "[^\\S]",
      "[x\\s]",
      "[x\\S]",
    ]) {
      const re2 = compilePattern(`^${pattern}$`);
      const js = new RegExp(`^${pattern}$`, "u");
      for (const c of [...JS_SPACES, ...others])
        expect(re2.test(c), `${pattern} on U+${c.codePointAt(0)?.toString(16)}`).to.equal(
          js.test(c),
        );
    }
  });

  it("leaves escaped backslashes, \\Q...\\E quotes and other escapes as written", () => {
    expect(withJsWhitespace("a\\\\s")).to.equal("a\\\\s");
    expect(withJsWhitespace("\\Q\\s\\E")).to.equal("\\Q\\s\\E");
    expect(withJsWhitespace("\\d+\\w")).to.equal("\\d+\\w");
    expect(compilePattern("a\\\\s").test("a\\s")).to.equal(true);
    expect(compilePattern("\\Q\\s\\E").test("\\s")).to.equal(true);
    expect(compilePattern("\\Q\\s\\E").test(" ")).to.equal(false);
  });

  it("a pattern with \\s matches across a no-break space", () => {
    expect(compilePattern("top\\s+secret").test("top\u00a0secret")).to.equal(true);
    expect(compilePattern("(?i)top[\\s-]secret").test("TOP\u2009SECRET")).to.equal(true);
  });
});
