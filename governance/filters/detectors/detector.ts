import type { RE2JS } from "re2js";

/** A half-open range [start, end) of UTF-16 offsets into the scanned text. */
export interface Span {
  start: number;
  end: number;
  /** Which of the detector's patterns found it, for detectors that name them (prompt injection). */
  name?: string;
}

/**
 * Finds what one filter looks for. Stateless and shared: a detector is built
 * once per process (builtins) or per compile (custom patterns) and may be
 * called for any number of texts.
 */
export interface Detector {
  /**
   * Non-empty, non-overlapping spans sorted by start. `pretested` may already know whether
   * some of `regexes` match somewhere in `text` (see PatternGate).
   */
  find(text: string, pretested?: Pretested): Span[];
  /** The regexes `find` tests on the whole text before searching it: what a gate can answer for. */
  regexes?: readonly RE2JS[];
  /** One-time set-up better paid when filters are compiled than on the first request. */
  warm?(): void;
}

/** What one pass over a text found out about regexes that detectors test on it. */
export interface Pretested {
  readonly text: string;
  /** Whether `re` matches somewhere in `text`; undefined when the pass did not test it. */
  matches(re: RE2JS): boolean | undefined;
}

/** Sorts spans and merges overlapping ones, so one stretch of text counts as one match. */
export function normalizeSpans(spans: Span[]): Span[] {
  const sorted = spans
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else out.push({ start: s.start, end: s.end });
  }
  return out;
}
