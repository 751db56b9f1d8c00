import type { Counter, Histogram, LabelValues } from "prom-client";

/**
 * Label children for the metrics every request updates (the gateway's request counter and
 * latency, the gRPC calls' on both sides of the hop). prom-client's own child re-validates and
 * re-hashes its labels (a string built from the sorted label names) on every inc() and
 * observe(): five of them per management read cost more than the read's JSON. These add to
 * the very record prom-client keeps for the label set (its `hashMap` entry), found once, after
 * a first update through prom-client itself; the exposition is prom-client's, unchanged.
 * Whenever that record is not the one found (the metric was reset, the series removed, or a
 * prom-client version keeps its records otherwise), the update goes through prom-client again
 * and the record is looked up anew: never a lost or a doubled count.
 */

type Labels = Record<string, string | number>;

/** What prom-client keeps per label set, as far as these children touch it. */
interface CounterRecord {
  labels: Labels;
  value: number;
}
interface HistogramRecord {
  labels: Labels;
  sum: number;
  count: number;
  bucketValues: Record<number, number>;
  bucketExemplars?: unknown;
}

/** prom-client's records of a metric, by its hash of the labels. */
function recordsOf<R>(metric: object): Record<string, R> | undefined {
  const map = (metric as { hashMap?: unknown }).hashMap;
  return map !== null && typeof map === "object" ? (map as Record<string, R>) : undefined;
}

function sameLabels(a: Labels, b: Labels): boolean {
  const keys = Object.keys(b);
  if (Object.keys(a).length !== keys.length) return false;
  return keys.every((k) => String(a[k]) === String(b[k]));
}

/** The record of `labels` and its key, once prom-client has made one. */
function find<R extends { labels: Labels }>(
  metric: object,
  labels: Labels,
): { key: string; record: R } | undefined {
  const records = recordsOf<R>(metric);
  if (!records) return undefined;
  for (const [key, record] of Object.entries(records)) {
    if (record && typeof record === "object" && sameLabels(record.labels, labels))
      return { key, record };
  }
  return undefined;
}

export interface CounterChild {
  inc(): void;
  /** True while updates go straight to prom-client's record (tests check the fast path). */
  readonly direct: boolean;
}

export function counterChild<T extends string>(
  counter: Counter<T>,
  labels: LabelValues<T>,
): CounterChild {
  const slow = counter.labels(labels);
  let found: { key: string; record: CounterRecord } | undefined;
  const direct = () => found !== undefined && recordsOf(counter)?.[found.key] === found.record;
  return {
    inc() {
      if (found && recordsOf(counter)?.[found.key] === found.record) {
        found.record.value += 1;
        return;
      }
      slow.inc();
      const f = find<CounterRecord>(counter, labels as Labels);
      found = f && typeof f.record.value === "number" ? f : undefined;
    },
    get direct() {
      return direct();
    },
  };
}

export interface HistogramChild {
  observe(value: number): void;
  readonly direct: boolean;
}

export function histogramChild<T extends string>(
  histogram: Histogram<T>,
  labels: LabelValues<T>,
): HistogramChild {
  const slow = histogram.labels(labels);
  const bounds = (histogram as unknown as { upperBounds?: unknown }).upperBounds;
  const upperBounds = Array.isArray(bounds) ? (bounds as number[]) : undefined;
  let found: { key: string; record: HistogramRecord } | undefined;
  const current = () =>
    found !== undefined && recordsOf(histogram)?.[found.key] === found.record ? found : undefined;
  return {
    observe(value) {
      const f = current();
      if (f && upperBounds && Number.isFinite(value)) {
        const r = f.record;
        r.sum += value;
        r.count += 1;
        // The first bucket the value fits, as prom-client's observe; above them all, only +Inf
        // (the count) has it.
        for (const bound of upperBounds) {
          if (value <= bound) {
            if (Object.hasOwn(r.bucketValues, bound)) r.bucketValues[bound] += 1;
            break;
          }
        }
        return;
      }
      slow.observe(value);
      const next = find<HistogramRecord>(histogram, labels as Labels);
      found =
        next &&
        typeof next.record.sum === "number" &&
        typeof next.record.count === "number" &&
        typeof next.record.bucketValues === "object" &&
        next.record.bucketExemplars === undefined
          ? next
          : undefined;
    },
    get direct() {
      return current() !== undefined && upperBounds !== undefined;
    },
  };
}
