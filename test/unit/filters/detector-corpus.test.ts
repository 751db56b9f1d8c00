import { expect } from "chai";
import { BUILTIN_FILTERS } from "../../../governance/filters/detectors/builtins.js";
import type { Detector } from "../../../governance/filters/detectors/detector.js";
import { count, type Kind, loadCorpus, score } from "./corpus.js";

/**
 * Quality floors on the labelled corpus (test/fixtures/README.md), a little
 * under what the gazetteer detectors measured (bench/detector-quality.ts) and
 * above what the compromise detectors they replaced measured:
 *   person-name  exact P/R 73.9/80.3 before, overlap 82.6/89.8;
 *   address      exact P/R 83.6/67.5 before, overlap 98.5/79.5.
 * Quality, on a fixed corpus: not a timing.
 */
const FLOORS: Record<string, { kind: Kind; exact: [number, number]; overlap: [number, number] }> = {
  "person-name": { kind: "names", exact: [0.9, 0.93], overlap: [0.92, 0.95] },
  address: { kind: "addresses", exact: [0.97, 0.95], overlap: [0.98, 0.96] },
};

describe("person-name and address detectors on the labelled corpus", () => {
  const corpus = loadCorpus();

  it("holds at least 200 labelled sentences, negatives included", () => {
    expect(corpus.length).to.be.at.least(200);
    expect(corpus.filter((s) => s.names.length + s.addresses.length === 0).length).to.be.above(50);
  });

  for (const [slug, floor] of Object.entries(FLOORS)) {
    it(`${slug}: precision and recall stay above their floors`, () => {
      const detector = BUILTIN_FILTERS.get(slug)?.detector as Detector;
      const s = score(detector, floor.kind, corpus);
      const report = JSON.stringify({ exact: s.exact, overlap: s.overlap });
      expect(s.exact.precision, report).to.be.at.least(floor.exact[0]);
      expect(s.exact.recall, report).to.be.at.least(floor.exact[1]);
      expect(s.overlap.precision, report).to.be.at.least(floor.overlap[0]);
      expect(s.overlap.recall, report).to.be.at.least(floor.overlap[1]);
    });
  }

  it("scores spans exactly and by overlap, each expected span used once", () => {
    const expected = [
      { start: 0, end: 10 },
      { start: 20, end: 30 },
    ];
    expect(count([{ start: 0, end: 10 }], expected)).to.deep.equal({
      found: 1,
      expected: 2,
      exact: 1,
      overlap: 1,
    });
    // One found span over both expected ones matches one of them.
    expect(count([{ start: 5, end: 25 }], expected)).to.deep.equal({
      found: 1,
      expected: 2,
      exact: 0,
      overlap: 1,
    });
  });
});
