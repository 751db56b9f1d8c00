/** Latency summary in milliseconds; computed here because autocannon has no TTFB histogram. */
export interface Summary {
  count: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (no interpolation: a real observed value). */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1] as number;
}

export function summarize(values: number[]): Summary {
  const sorted = Float64Array.from(values).sort();
  const arr = Array.from(sorted);
  const sum = arr.reduce((a, b) => a + b, 0);
  return {
    count: arr.length,
    p50: percentile(arr, 50),
    p99: percentile(arr, 99),
    mean: arr.length ? sum / arr.length : Number.NaN,
    max: arr.length ? (arr[arr.length - 1] as number) : Number.NaN,
  };
}
