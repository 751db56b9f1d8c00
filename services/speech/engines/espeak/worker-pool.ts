import { Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { JobTimeoutError, WorkerCrashedError, WorkerJobError } from "./errors.js";
import type { WorkerMessage } from "./worker-protocol.js";

export interface WorkerPoolOptions {
  /** A module that calls `serveJobs`. */
  url: URL;
  size: number;
  /** A job still running after this long has its worker terminated and replaced. */
  jobTimeoutMs: number;
  logger: Logger;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** High-priority jobs are dispatched before any queued low-priority one. */
  priority?: "high" | "low";
  transfer?: ArrayBuffer[];
}

interface Job<Request, Result> {
  id: number;
  request: Request;
  transfer: ArrayBuffer[];
  settled: boolean;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

interface Slot<Request, Result> {
  worker: Worker;
  ready: boolean;
  /** Set once the worker is being terminated, so nothing more is dispatched to it. */
  retiring: boolean;
  job?: Job<Request, Result>;
  timer?: NodeJS.Timeout;
  lastError?: unknown;
}

const RESPAWN_BASE_DELAY_MS = 100;
const RESPAWN_MAX_DELAY_MS = 5000;

/**
 * A fixed-size pool of worker threads, each running one job at a time. Crashed, failed or
 * timed-out workers are replaced, so no single job can wedge the pool.
 */
export class WorkerPool<Request, Result> {
  readonly #options: WorkerPoolOptions;
  readonly #slots = new Set<Slot<Request, Result>>();
  readonly #queues = { high: [] as Job<Request, Result>[], low: [] as Job<Request, Result>[] };
  readonly #respawnTimers = new Set<NodeJS.Timeout>();
  #nextId = 1;
  #spawnFailures = 0;
  #closed = false;

  private constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  /** Resolves once every worker has finished its setup; rejects if any of them fails it. */
  static async start<Request, Result>(
    options: WorkerPoolOptions,
  ): Promise<WorkerPool<Request, Result>> {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new RangeError(`pool size must be a positive integer, got ${options.size}`);
    }
    const pool = new WorkerPool<Request, Result>(options);
    try {
      await Promise.all(Array.from({ length: options.size }, () => pool.#spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  run(request: Request, options: RunOptions = {}): Promise<Result> {
    const { signal, priority = "high", transfer = [] } = options;
    if (this.#closed) {
      return Promise.reject(new Error("worker pool is closed"));
    }
    if (signal?.aborted) {
      return Promise.reject(signal.reason);
    }
    return new Promise<Result>((resolve, reject) => {
      const onAbort = () => {
        const queue = this.#queues[priority];
        const index = queue.indexOf(job);
        if (index >= 0) {
          queue.splice(index, 1);
        }
        // A job already running is left to finish (or time out); its result is dropped.
        settle(job, () => reject(signal?.reason));
      };
      const job: Job<Request, Result> = {
        id: this.#nextId++,
        request,
        transfer,
        settled: false,
        resolve: (result) => settle(job, () => resolve(result)),
        reject: (error) => settle(job, () => reject(error)),
      };
      const settle = (target: Job<Request, Result>, outcome: () => void) => {
        if (target.settled) {
          return;
        }
        target.settled = true;
        signal?.removeEventListener("abort", onAbort);
        outcome();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#queues[priority].push(job);
      this.#dispatch();
    });
  }

  /** Workers ready to take jobs (health checks: none means nothing can be synthesized). */
  get readyWorkers(): number {
    if (this.#closed) return 0;
    let n = 0;
    for (const slot of this.#slots) if (slot.ready && !slot.retiring) n++;
    return n;
  }

  /** Rejects every queued and running job and terminates the workers. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#respawnTimers) {
      clearTimeout(timer);
    }
    this.#respawnTimers.clear();
    const closed = new Error("worker pool is closed");
    for (const job of [...this.#queues.high, ...this.#queues.low]) {
      job.reject(closed);
    }
    this.#queues.high = [];
    this.#queues.low = [];
    await Promise.all(
      [...this.#slots].map((slot) => {
        clearTimeout(slot.timer);
        slot.job?.reject(closed);
        slot.retiring = true;
        return slot.worker.terminate();
      }),
    );
  }

  #spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const slot: Slot<Request, Result> = {
        worker: new Worker(this.#options.url),
        ready: false,
        retiring: false,
      };
      this.#slots.add(slot);
      slot.worker.on("message", (message: WorkerMessage<Result>) => {
        if (message.type === "ready") {
          slot.ready = true;
          this.#spawnFailures = 0;
          resolve();
          this.#dispatch();
        } else {
          this.#onMessage(slot, message);
        }
      });
      slot.worker.on("error", (error) => {
        slot.lastError = error;
      });
      slot.worker.on("exit", (code) => {
        this.#slots.delete(slot);
        clearTimeout(slot.timer);
        if (!slot.ready) {
          reject(
            new WorkerCrashedError(`worker exited with code ${code} during setup`, {
              cause: slot.lastError,
            }),
          );
          return;
        }
        if (slot.job && !slot.job.settled) {
          slot.job.reject(
            new WorkerCrashedError(`worker exited with code ${code} while running a job`, {
              cause: slot.lastError,
            }),
          );
        }
        if (!slot.retiring) {
          this.#options.logger.warn({ code, err: slot.lastError }, "worker exited unexpectedly");
        }
        this.#replace();
      });
    });
  }

  #onMessage(
    slot: Slot<Request, Result>,
    message: Exclude<WorkerMessage<Result>, { type: "ready" }>,
  ) {
    if (message.type === "log") {
      this.#options.logger[message.level]({ threadId: slot.worker.threadId }, message.message);
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== message.id) {
      return;
    }
    clearTimeout(slot.timer);
    slot.job = undefined;
    if (message.type === "result") {
      job.resolve(message.result);
    } else {
      job.reject(new WorkerJobError(message.error.message, message.error.name));
      if (message.fatal) {
        this.#options.logger.warn({ err: message.error }, "replacing worker after a failed job");
        this.#retire(slot);
      }
    }
    this.#dispatch();
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (!slot.ready || slot.retiring || slot.job) {
        continue;
      }
      const job = this.#queues.high.shift() ?? this.#queues.low.shift();
      if (job === undefined) {
        return;
      }
      slot.job = job;
      slot.timer = setTimeout(() => {
        job.reject(new JobTimeoutError(`job ran longer than ${this.#options.jobTimeoutMs} ms`));
        this.#retire(slot);
      }, this.#options.jobTimeoutMs);
      try {
        slot.worker.postMessage({ id: job.id, request: job.request }, job.transfer);
      } catch (error) {
        clearTimeout(slot.timer);
        slot.job = undefined;
        job.reject(error);
      }
    }
  }

  /** Terminates a worker whose state can no longer be trusted; its exit triggers a replacement. */
  #retire(slot: Slot<Request, Result>): void {
    slot.retiring = true;
    void slot.worker.terminate();
  }

  #replace(): void {
    if (this.#closed) {
      return;
    }
    this.#spawn().catch((error: unknown) => {
      if (this.#closed) {
        return;
      }
      this.#spawnFailures++;
      this.#options.logger.error({ err: error }, "replacement worker failed to start");
      if (this.#slots.size === 0) {
        // Nothing is left to run queued jobs; fail them rather than leave callers hanging.
        for (const job of [...this.#queues.high, ...this.#queues.low]) {
          job.reject(error);
        }
        this.#queues.high = [];
        this.#queues.low = [];
      }
      const delay = Math.min(
        RESPAWN_MAX_DELAY_MS,
        RESPAWN_BASE_DELAY_MS * 2 ** (this.#spawnFailures - 1),
      );
      const timer = setTimeout(() => {
        this.#respawnTimers.delete(timer);
        this.#replace();
      }, delay);
      this.#respawnTimers.add(timer);
    });
  }
}
