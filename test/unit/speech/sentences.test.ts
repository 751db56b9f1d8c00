import { expect } from "chai";
import {
  splitSentences,
  withShortLead,
} from "../../../services/speech/engines/espeak/sentences.js";

const withoutWhitespace = (text: string) => text.replace(/\s+/gu, "");

/** Every piece is non-empty, trimmed, within the limit, and together they are the input, in order. */
function expectFaithful(text: string, pieces: string[], maxChars: number) {
  for (const piece of pieces) {
    expect(piece.length).to.be.within(1, maxChars);
    expect(piece).to.equal(piece.trim());
  }
  expect(withoutWhitespace(pieces.join(""))).to.equal(withoutWhitespace(text));
  let from = 0;
  for (const piece of pieces) {
    const at = text.indexOf(piece, from);
    expect(at, `"${piece}" in order`).to.be.at.least(from);
    from = at + piece.length;
  }
}

describe("splitSentences", () => {
  it("splits on sentence punctuation", () => {
    expect(splitSentences("Hello world. How are you? Fine! Good…  Bye.")).to.deep.equal([
      "Hello world.",
      "How are you?",
      "Fine!",
      "Good…",
      "Bye.",
    ]);
  });

  it("keeps closing quotes and brackets with their sentence", () => {
    expect(splitSentences('He said "stop." Then (quietly!) he left.')).to.deep.equal([
      'He said "stop."',
      "Then (quietly!) he left.",
    ]);
  });

  it("does not split inside numbers, abbreviations before lowercase words, or ellipses mid-sentence", () => {
    expect(splitSentences("Pi is 3.14 today. Use e.g. this one. Well... maybe not.")).to.deep.equal(
      ["Pi is 3.14 today.", "Use e.g. this one.", "Well... maybe not."],
    );
  });

  it("splits on newlines, including CRLF and blank lines", () => {
    expect(splitSentences("Title\r\n\r\nFirst line\nSecond line")).to.deep.equal([
      "Title",
      "First line",
      "Second line",
    ]);
  });

  it("splits on CJK full stops without spaces", () => {
    expect(splitSentences("你好。你好吗？很好！")).to.deep.equal(["你好。", "你好吗？", "很好！"]);
  });

  it("returns nothing for empty or blank text, and never an empty piece", () => {
    expect(splitSentences("")).to.deep.equal([]);
    expect(splitSentences(" \n\t \r\n ")).to.deep.equal([]);
    expect(splitSentences("... !! \n ?")).to.deep.equal(["...", "!!", "?"]);
  });

  it("splits over-long sentences at clause punctuation first", () => {
    const text = `${"word ".repeat(30)}and more, ${"other ".repeat(20)}end.`;
    const pieces = splitSentences(text, 200);
    expect(pieces[0].endsWith("and more,")).to.equal(true);
    expectFaithful(text, pieces, 200);
  });

  it("splits over-long sentences without clause punctuation at spaces", () => {
    const text = `${"lorem ipsum dolor ".repeat(40)}sit.`;
    const pieces = splitSentences(text, 100);
    expect(pieces.length).to.be.greaterThan(6);
    for (const piece of pieces.slice(0, -1)) {
      expect(text).to.match(new RegExp(`${piece}\\s`, "u"));
    }
    expectFaithful(text, pieces, 100);
  });

  it("cuts a run without any break hard, but never inside a surrogate pair", () => {
    const text = "😀".repeat(300);
    const pieces = splitSentences(text, 101);
    expectFaithful(text, pieces, 101);
    for (const piece of pieces) {
      expect(piece.length % 2).to.equal(0);
    }
  });

  it("loses no content on mixed input", () => {
    const text = [
      "  Once upon a time, in a land far away, there lived a king.",
      "He had three daughters; each was wiser than the last: clever, shrewd, and sage!",
      `A very long URL: https://example.com/${"x".repeat(500)} follows.`,
      "Did they live happily ever after?\nNobody knows… The end.\n\n",
    ].join(" ");
    for (const maxChars of [2, 17, 80, 400]) {
      expectFaithful(text, splitSentences(text, maxChars), maxChars);
    }
  });

  it("rejects a nonsensical limit", () => {
    expect(() => splitSentences("a", 1)).to.throw(RangeError);
    expect(() => splitSentences("a", 2.5)).to.throw(RangeError);
  });
});

describe("withShortLead", () => {
  it("cuts a long first sentence at a clause or space and keeps every character", () => {
    const pieces = splitSentences(
      "When the quick brown fox finally jumped over the lazy dog, everyone cheered loudly. Then we left.",
    );
    const led = withShortLead(pieces, 32);
    expect(led[0]?.length).to.be.at.most(32);
    expect(led.length).to.equal(pieces.length + 1);
    expect(led.join(" ").replace(/\s+/g, " ")).to.equal(pieces.join(" ").replace(/\s+/g, " "));
  });

  it("leaves a first sentence under twice the lead alone", () => {
    const pieces = [
      "The station was quiet that morning.",
      "A much longer second sentence that stays whole.",
    ];
    expect(withShortLead(pieces, 32)).to.deep.equal(pieces);
  });
});
