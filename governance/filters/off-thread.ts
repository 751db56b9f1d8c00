import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { CompiledFilters } from "./compiled-filters.js";
import type { FilterJob, FilterJobResult } from "./filter-worker.js";
import type { FilterResult, TextPart } from "./types.js";

/**
 * Work estimated above this runs on a worker thread: a short text with a few
 * regex filters (well under a millisecond) is not worth the hop, a 10,000
 * character request with the NLP detectors (tens of milliseconds) would
 * stall every other request on the event loop.
 */
export const INLINE_MAX_MICROS = 2_000;

let pool: Piscina<FilterJob, FilterJobResult> | undefined;

/**
 * Started on the first long text. Its threads then stay: each one loads
 * the name and address gazetteers (a few MB, a fraction of a second) and compiles the sets it is sent,
 * which an idle timeout would make later requests pay again. Idle threads do
 * not keep the process alive.
 */
function filterPool(): Piscina<FilterJob, FilterJobResult> {
  // The speech engine has its own workers; filters take at most half the cores.
  const threads = Math.max(1, Math.floor(availableParallelism() / 2));
  pool ??= new Piscina<FilterJob, FilterJobResult>({
    filename: new URL("./filter-worker.js", import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
  });
  return pool;
}

/** Counters for tests: how many applications ran where. */
export const filterRuns = { inline: 0, worker: 0 };

/**
 * Applies `filters` to `parts`, on this thread when the estimated work is
 * small and on a worker thread otherwise. Either way the caller gets the
 * redacted parts before anything is sent onwards.
 */
export async function applyFilters(
  filters: CompiledFilters,
  parts: TextPart[],
  signal?: AbortSignal,
): Promise<FilterResult> {
  const chars = parts.reduce((n, p) => n + p.text.length, 0);
  if (filters.microsPerChar * chars <= INLINE_MAX_MICROS) {
    filterRuns.inline++;
    return filters.apply(parts);
  }
  filterRuns.worker++;
  const workers = filterPool();
  const first = await workers.run({ key: filters.key, parts }, { signal });
  if (!first.missing) return first.result;
  const second = await workers.run({ key: filters.key, rules: filters.source, parts }, { signal });
  if (second.missing) throw new Error("filter worker did not keep the rules it was sent");
  return second.result;
}

/** Stops the worker threads (tests, shutdown); a later call starts a new pool. */
export async function closeFilterWorkers(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.close({ force: true });
}
