import { expect } from "chai";
import { wordsPerMinute } from "../../../services/speech/engines/espeak/speech-rate.js";

describe("wordsPerMinute", () => {
  it("scales eSpeak's default 175 wpm by the speed", () => {
    expect(wordsPerMinute(1)).to.equal(175);
    expect(wordsPerMinute(2)).to.equal(350);
    expect(wordsPerMinute(0.5)).to.equal(88);
  });

  it("clamps to the 80..450 wpm eSpeak accepts", () => {
    expect(wordsPerMinute(0.25)).to.equal(80);
    expect(wordsPerMinute(4)).to.equal(450);
  });

  it("rejects speeds outside 0.25..4", () => {
    for (const speed of [0, 0.24, 4.01, Number.POSITIVE_INFINITY, Number.NaN]) {
      expect(() => wordsPerMinute(speed)).to.throw(RangeError);
    }
  });
});
