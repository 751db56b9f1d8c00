/**
 * Quality and cost of the `person-name` and `address` detectors, on one
 * thread: `node dist/bench/detector-quality.js` (after `npm run build`).
 * Scores each against the labelled corpus (test/fixtures/README.md) by exact
 * and overlapping spans, on the whole corpus and on its held-out fifth (every
 * fifth sentence, whose misses are not printed: rules were tuned on the
 * rest), then prices a scanned character in CPU microseconds on the corpus
 * (many short texts) and on 10,000 characters of the benchmarks' prose.
 * `DETECTOR_QUALITY_MISSES=1` prints the tuning sentences a detector got wrong.
 */
import { BUILTIN_FILTERS } from "../governance/filters/detectors/builtins.js";
import type { Detector } from "../governance/filters/detectors/detector.js";
import { type Kind, loadCorpus, type Sentence, score } from "../test/unit/filters/corpus.js";
import { prose } from "./texts.js";

const HELD_OUT = (_: Sentence, i: number) => i % 5 === 4;

/** CPU microseconds (user + system of the process) per character over `rounds` scans of `texts`. */
function microsPerChar(detector: Detector, texts: string[], rounds: number): number {
  for (const t of texts) detector.find(t); // warm-up: JIT, lazy loading
  const chars = texts.reduce((n, t) => n + t.length, 0) * rounds;
  const before = process.cpuUsage();
  for (let r = 0; r < rounds; r++) for (const t of texts) detector.find(t);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / chars;
}

const pct = (x: number) => (100 * x).toFixed(1);
const corpus = loadCorpus();
const heldOut = corpus.filter(HELD_OUT);
const longText = prose(10_000);
const rows: string[] = [];
for (const [slug, kind] of [
  ["person-name", "names"],
  ["address", "addresses"],
] as [string, Kind][]) {
  const detector = BUILTIN_FILTERS.get(slug)?.detector as Detector;
  const loadStart = process.cpuUsage();
  detector.warm?.();
  detector.find("Warm up, Ada, at 1 Main St.");
  const load = process.cpuUsage(loadStart);
  const all = score(detector, kind, corpus);
  const held = score(detector, kind, heldOut);
  const corpusCost = microsPerChar(
    detector,
    corpus.map((s) => s.text),
    Number(process.env.DETECTOR_QUALITY_ROUNDS ?? 5),
  );
  const proseCost = microsPerChar(detector, [longText], 3);
  rows.push(
    `| ${slug} | ${all.counts.expected} | ${pct(all.exact.precision)} / ${pct(all.exact.recall)} / ${pct(all.exact.f1)}` +
      ` | ${pct(all.overlap.precision)} / ${pct(all.overlap.recall)} / ${pct(all.overlap.f1)}` +
      ` | ${pct(held.exact.precision)} / ${pct(held.exact.recall)} | ${corpusCost.toFixed(2)} | ${proseCost.toFixed(2)}` +
      ` | ${((load.user + load.system) / 1000).toFixed(0)} |`,
  );
  if (process.env.DETECTOR_QUALITY_MISSES === "1") {
    const tuning = score(
      detector,
      kind,
      corpus.filter((s, i) => !HELD_OUT(s, i)),
    );
    for (const m of tuning.misses)
      console.error(
        `${slug}: ${JSON.stringify(m.text)}\n  expected ${JSON.stringify(m.expected)}\n  found    ${JSON.stringify(m.found)}`,
      );
  }
}
console.log(
  `corpus: ${corpus.length} sentences (${heldOut.length} held out), ${corpus.reduce((n, s) => n + s.text.length, 0)} characters; prose: ${longText.length} characters\n`,
);
console.log(
  "| Detector | Expected spans | Exact P / R / F1 % | Overlap P / R / F1 % | Held-out exact P / R % | µs/char, corpus | µs/char, prose | First use, ms CPU |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(r);
