import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import { type CompiledFilters, PastDeadline } from "./compiled-filters.js";
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
  if (!pool) {
    pool = new Piscina<FilterJob, FilterJobResult>({
      filename: new URL("./filter-worker.js", import.meta.url).href,
      minThreads: threads,
      maxThreads: threads,
    });
    pool.on("workerCreate", () => {
      filterRuns.threadsStarted++;
    });
  }
  return pool;
}

/** Counters for tests: how many applications ran where, how many filter threads were started. */
export const filterRuns = { inline: 0, worker: 0, threadsStarted: 0, pastDeadline: 0 };

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
  // The estimate prices every detector at its worst, which most texts are far from (twenty
  // custom patterns and every builtin over 300 characters: priced 6 ms, run in 0.1 to 0.3).
  // When no single detector can cost more than the budget, run here anyway, checking the
  // clock between detectors: past the point where one more could cross the budget, stop and
  // send the whole text to a thread. The event loop is held at most INLINE_MAX_MICROS either
  // way, and the thread, with its queue, is left to texts that need it.
  const reserve = Math.max(filters.maxDetectorMicrosPerChar * chars, filters.gateStepMicros);
  if (reserve < INLINE_MAX_MICROS) {
    const deadline = performance.now() + (INLINE_MAX_MICROS - reserve) / 1000;
    try {
      const result = filters.apply(parts, deadline);
      filterRuns.inline++;
      return result;
    } catch (err) {
      if (!(err instanceof PastDeadline)) throw err;
      filterRuns.pastDeadline++;
    }
  }
  filterRuns.worker++;
  const workers = filterPool();
  const first = await untilAborted(workers.run({ key: filters.key, parts }), signal);
  if (!first.missing) return first.result;
  const second = await untilAborted(
    workers.run({ key: filters.key, rules: filters.source, parts }),
    signal,
  );
  if (second.missing) throw new Error("filter worker did not keep the rules it was sent");
  return second.result;
}

/**
 * The task's result, or the signal's reason once the client went away. The task itself is not
 * cancelled: Piscina cancels a running task by terminating its thread, and the thread that
 * replaces it loads the gazetteers and compiles every filter set again (about a second), while
 * every request behind it waits: a load test's closing connections made the enforcement tail.
 * A task runs for milliseconds; letting it finish unread costs less.
 */
function untilAborted<T>(task: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return task;
  if (signal.aborted) {
    task.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    task.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Stops the worker threads (tests, shutdown); a later call starts a new pool. */
export async function closeFilterWorkers(): Promise<void> {
  const current = pool;
  pool = undefined;
  await current?.close({ force: true });
}
