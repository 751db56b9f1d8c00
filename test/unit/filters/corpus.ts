import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Detector, Span } from "../../../governance/filters/detectors/detector.js";

/** The hand-labelled corpus of test/fixtures/README.md; read from the source tree, not dist/. */
export const CORPUS_FILE = fileURLToPath(
  new URL("../../../../test/fixtures/pii-names-addresses.jsonl", import.meta.url),
);

export type Kind = "names" | "addresses";

export interface Sentence {
  text: string;
  names: Span[];
  addresses: Span[];
}

/** Expected substrings, in order, as offsets: each is searched for after the previous one. */
function locate(text: string, expected: string[], line: number): Span[] {
  let from = 0;
  return expected.map((s) => {
    const start = text.indexOf(s, from);
    if (start < 0) throw new Error(`corpus line ${line}: ${JSON.stringify(s)} not found in order`);
    from = start + s.length;
    return { start, end: start + s.length };
  });
}

export function loadCorpus(file = CORPUS_FILE): Sentence[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l, i) => {
      const raw = JSON.parse(l) as { text: string; names: string[]; addresses: string[] };
      return {
        text: raw.text,
        names: locate(raw.text, raw.names, i + 1),
        addresses: locate(raw.text, raw.addresses, i + 1),
      };
    });
}

export interface Counts {
  found: number;
  expected: number;
  exact: number;
  overlap: number;
}

export interface Scores {
  counts: Counts;
  exact: { precision: number; recall: number; f1: number };
  overlap: { precision: number; recall: number; f1: number };
  /** Sentences where the detector disagreed with the labels (exactly), for reading. */
  misses: { text: string; expected: string[]; found: string[] }[];
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;

/** Matches found spans to expected ones, each used at most once: exact pairs, then overlapping pairs. */
export function count(found: Span[], expected: Span[]): Counts {
  const exact = found.filter((f) =>
    expected.some((e) => e.start === f.start && e.end === f.end),
  ).length;
  const used = new Set<Span>();
  let overlap = 0;
  for (const f of found) {
    const e = expected.find((x) => !used.has(x) && overlaps(f, x));
    if (e) {
      used.add(e);
      overlap++;
    }
  }
  return { found: found.length, expected: expected.length, exact, overlap };
}

function prf(matched: number, found: number, expected: number) {
  // No span found and none expected is perfect; found nothing of something is zero recall.
  const precision = found === 0 ? 1 : matched / found;
  const recall = expected === 0 ? 1 : matched / expected;
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { precision, recall, f1 };
}

/** Precision, recall and F1 of `detector` against the corpus' `kind` labels. */
export function score(detector: Detector, kind: Kind, corpus = loadCorpus()): Scores {
  const total: Counts = { found: 0, expected: 0, exact: 0, overlap: 0 };
  const misses: Scores["misses"] = [];
  for (const s of corpus) {
    const found = detector.find(s.text);
    const c = count(found, s[kind]);
    total.found += c.found;
    total.expected += c.expected;
    total.exact += c.exact;
    total.overlap += c.overlap;
    if (c.exact !== c.found || c.exact !== c.expected) {
      const show = (spans: Span[]) => spans.map((x) => s.text.slice(x.start, x.end));
      misses.push({ text: s.text, expected: show(s[kind]), found: show(found) });
    }
  }
  return {
    counts: total,
    exact: prf(total.exact, total.found, total.expected),
    overlap: prf(total.overlap, total.found, total.expected),
    misses,
  };
}
