import { normalizeSpans, type Span } from "./detectors/detector.js";
import type { FilterActionName } from "./types.js";

/** block > redact > flag: on the same text the strongest action is the one applied. */
export const STRENGTH: Readonly<Record<FilterActionName, number>> = {
  flag: 1,
  redact: 2,
  block: 3,
};

export interface Hit extends Span {
  strength: number;
  /** The rule's position in the compiled list, to break ties deterministically. */
  order: number;
}

/** Does `span` share at least one character with the sorted, disjoint `spans`? */
function overlapsAny(spans: Span[], span: Span): boolean {
  let lo = 0;
  let hi = spans.length;
  // First span ending after span.start.
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((spans[mid] as Span).end <= span.start) lo = mid + 1;
    else hi = mid;
  }
  const next = spans[lo];
  return next !== undefined && next.start < span.end;
}

/** The hits whose action applies: a hit overlapping a hit of a stronger action gives way to it. */
export function appliedHits<H extends Hit>(hits: H[]): H[] {
  if (hits.every((h) => h.strength === hits[0]?.strength)) return hits;
  const stronger = new Map<number, Span[]>();
  for (const level of [STRENGTH.flag, STRENGTH.redact]) {
    stronger.set(level, normalizeSpans(hits.filter((h) => h.strength > level)));
  }
  return hits.filter((h) => !overlapsAny(stronger.get(h.strength) ?? [], h));
}

/**
 * Replaces each redacted stretch with its label. Overlapping spans are merged
 * and the union replaced once, with the label of the span that starts first
 * (the earlier rule on a tie); spans that only touch stay separate.
 */
export function redact(text: string, hits: (Hit & { label: string })[]): string {
  if (hits.length === 0) return text;
  const sorted = [...hits].sort((a, b) => a.start - b.start || a.order - b.order);
  let out = "";
  let cursor = 0;
  let current: { start: number; end: number; label: string } | undefined;
  for (const h of sorted) {
    if (current && h.start < current.end) {
      current.end = Math.max(current.end, h.end);
      continue;
    }
    if (current) {
      out += text.slice(cursor, current.start) + current.label;
      cursor = current.end;
    }
    current = { start: h.start, end: h.end, label: h.label };
  }
  if (current) out += text.slice(cursor, current.start) + current.label;
  return out + text.slice(current ? current.end : cursor);
}
