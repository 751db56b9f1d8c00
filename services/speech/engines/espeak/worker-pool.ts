import { type ResourceLimits, Worker } from "node:worker_threads";
import type { Logger } from "pino";
import { JobTimeoutError, WorkerCrashedError, WorkerJobError } from "./errors.js";
import type { JobMessage, WorkerMessage, WorkerSetup } from "./worker-protocol.js";

export interface WorkerPoolOptions {
  /** A module that calls `serveJobs`. */
  url: URL;
  size: number;
  /** A job still running after this long has its worker terminated and replaced. */
  jobTimeoutMs: number;
  logger: Logger;
  /** Handed to every worker's setup; a SharedArrayBuffer in it is shared, not copied. */
  workerData?: unknown;
  /** Leases one worker may hold at once (each lease is state kept in that worker); default: no limit. */
  maxLeasesPerWorker?: number;
  /** V8 heap limits of each worker (Node's defaults when absent). */
  resourceLimits?: ResourceLimits;
}

export interface RunOptions<Chunk> {
  signal?: AbortSignal;
  /** High-priority jobs are dispatched before any queued low-priority one. */
  priority?: "high" | "low";
  transfer?: ArrayBuffer[];
  /** Receives, in order, the chunks the job sends ahead of its result. */
  onChunk?: (chunk: Chunk) => void;
  /** Runs the job on the leased worker, after the lease's earlier jobs of the same priority. */
  lease?: WorkerLease<unknown>;
}

/**
 * The right to run jobs on one particular worker, for jobs that build on state the worker keeps
 * between them. A lease dies with its worker: its queued and later jobs then fail.
 */
export interface WorkerLease<Request> {
  /** Ends the lease; `notice`, if given, is sent one-way to the worker, after the job it runs. */
  release(notice?: Request): void;
}

interface Job<Request, Result, Chunk> {
  id: number;
  request: Request;
  transfer: ArrayBuffer[];
  settled: boolean;
  onChunk?: (chunk: Chunk) => void;
  /** The queue it waits in, until dispatched. */
  queue?: Job<Request, Result, Chunk>[];
  /** The slot running it, once dispatched. */
  slot?: Slot<Request, Result, Chunk>;
  resolve(result: Result): void;
  reject(error: unknown): void;
}

interface Queues<Request, Result, Chunk> {
  high: Job<Request, Result, Chunk>[];
  low: Job<Request, Result, Chunk>[];
}

interface Slot<Request, Result, Chunk> {
  worker: Worker;
  ready: boolean;
  /** Set once the worker is being terminated, so nothing more is dispatched to it. */
  retiring: boolean;
  job?: Job<Request, Result, Chunk>;
  timer?: NodeJS.Timeout;
  lastError?: unknown;
  /** Shared with the worker: the id of a running job the pool has given up on. */
  cancel: Int32Array;
  /** Jobs that must run on this worker (leased). */
  pinned: Queues<Request, Result, Chunk>;
  leases: Set<Lease<Request, Result, Chunk>>;
}

class Lease<Request, Result, Chunk> implements WorkerLease<Request> {
  /** Undefined once released or once its worker is gone. */
  slot?: Slot<Request, Result, Chunk>;
  /** Why the lease can no longer run jobs. */
  ended?: Error;

  constructor(
    slot: Slot<Request, Result, Chunk>,
    private readonly onRelease: (lease: Lease<Request, Result, Chunk>, notice?: Request) => void,
  ) {
    this.slot = slot;
  }

  release(notice?: Request): void {
    this.onRelease(this, notice);
  }
}

interface LeaseWaiter<Request, Result, Chunk> {
  resolve(lease: Lease<Request, Result, Chunk>): void;
  reject(error: unknown): void;
}

const RESPAWN_BASE_DELAY_MS = 100;
const RESPAWN_MAX_DELAY_MS = 5000;

/**
 * A fixed-size pool of worker threads, each running one job at a time. Crashed, failed or
 * timed-out workers are replaced, so no single job can wedge the pool. Jobs may stream chunks of
 * their output before their result, and may be pinned to one worker through a lease.
 */
export class WorkerPool<Request, Result, Chunk = never> {
  readonly #options: WorkerPoolOptions;
  readonly #maxLeases: number;
  readonly #slots = new Set<Slot<Request, Result, Chunk>>();
  #queues: Queues<Request, Result, Chunk> = { high: [], low: [] };
  #leaseWaiters: LeaseWaiter<Request, Result, Chunk>[] = [];
  readonly #respawnTimers = new Set<NodeJS.Timeout>();
  #nextId = 1;
  #spawnFailures = 0;
  #closed = false;

  private constructor(options: WorkerPoolOptions) {
    this.#options = options;
    this.#maxLeases = options.maxLeasesPerWorker ?? Number.POSITIVE_INFINITY;
  }

  /** Resolves once every worker has finished its setup; rejects if any of them fails it. */
  static async start<Request, Result, Chunk = never>(
    options: WorkerPoolOptions,
  ): Promise<WorkerPool<Request, Result, Chunk>> {
    if (!Number.isInteger(options.size) || options.size < 1) {
      throw new RangeError(`pool size must be a positive integer, got ${options.size}`);
    }
    const max = options.maxLeasesPerWorker;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1)) {
      throw new RangeError(`maxLeasesPerWorker must be a positive integer, got ${max}`);
    }
    const pool = new WorkerPool<Request, Result, Chunk>(options);
    try {
      await Promise.all(Array.from({ length: options.size }, () => pool.#spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  run(request: Request, options: RunOptions<Chunk> = {}): Promise<Result> {
    const { signal, priority = "high", transfer = [], onChunk } = options;
    if (this.#closed) {
      return Promise.reject(new Error("worker pool is closed"));
    }
    if (signal?.aborted) {
      return Promise.reject(signal.reason);
    }
    let queues = this.#queues;
    if (options.lease !== undefined) {
      const lease = options.lease as Lease<Request, Result, Chunk>;
      if (lease.slot === undefined) {
        return Promise.reject(lease.ended ?? new Error("the lease was released"));
      }
      queues = lease.slot.pinned;
    }
    return new Promise<Result>((resolve, reject) => {
      const onAbort = () => {
        if (job.queue !== undefined) {
          const index = job.queue.indexOf(job);
          if (index >= 0) {
            job.queue.splice(index, 1);
          }
        } else if (job.slot !== undefined && job.slot.job === job) {
          // The worker polls this between blocks of work and stops early; its answer is dropped.
          Atomics.store(job.slot.cancel, 0, job.id);
        }
        settle(job, () => reject(signal?.reason));
      };
      const job: Job<Request, Result, Chunk> = {
        id: this.#nextId++,
        request,
        transfer,
        settled: false,
        onChunk,
        resolve: (result) => settle(job, () => resolve(result)),
        reject: (error) => settle(job, () => reject(error)),
      };
      const settle = (target: Job<Request, Result, Chunk>, outcome: () => void) => {
        if (target.settled) {
          return;
        }
        target.settled = true;
        signal?.removeEventListener("abort", onAbort);
        outcome();
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      job.queue = queues[priority];
      job.queue.push(job);
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

  /**
   * A lease on the worker holding the fewest, once one holds fewer than `maxLeasesPerWorker`;
   * callers beyond that wait in turn (or until `signal` aborts).
   */
  lease(signal?: AbortSignal): Promise<WorkerLease<Request>> {
    if (this.#closed) {
      return Promise.reject(new Error("worker pool is closed"));
    }
    if (signal?.aborted) {
      return Promise.reject(signal.reason);
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.#leaseWaiters = this.#leaseWaiters.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter: LeaseWaiter<Request, Result, Chunk> = {
        resolve: (lease) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(lease);
        },
        reject: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#leaseWaiters.push(waiter);
      this.#grantLeases();
    });
  }

  /** Jobs waiting for a worker (shared and pinned queues): the engine queue depth metric. */
  get queued(): number {
    let n = this.#queues.high.length + this.#queues.low.length;
    for (const slot of this.#slots) n += slot.pinned.high.length + slot.pinned.low.length;
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
    for (const waiter of this.#leaseWaiters) {
      waiter.reject(closed);
    }
    this.#leaseWaiters = [];
    const queued = [...this.#queues.high, ...this.#queues.low];
    this.#queues = { high: [], low: [] };
    for (const slot of this.#slots) {
      queued.push(...slot.pinned.high, ...slot.pinned.low);
      slot.pinned = { high: [], low: [] };
    }
    for (const job of queued) {
      job.reject(closed);
    }
    await Promise.all(
      [...this.#slots].map((slot) => {
        clearTimeout(slot.timer);
        slot.job?.reject(closed);
        this.#endLeases(slot, closed);
        slot.retiring = true;
        return slot.worker.terminate();
      }),
    );
  }

  #spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const cancel = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
      const setup: WorkerSetup = { cancel, data: this.#options.workerData };
      const slot: Slot<Request, Result, Chunk> = {
        worker: new Worker(this.#options.url, {
          workerData: setup,
          resourceLimits: this.#options.resourceLimits,
        }),
        ready: false,
        retiring: false,
        cancel: new Int32Array(cancel),
        pinned: { high: [], low: [] },
        leases: new Set(),
      };
      this.#slots.add(slot);
      slot.worker.on("message", (message: WorkerMessage<Result, Chunk>) => {
        if (message.type === "ready") {
          slot.ready = true;
          this.#spawnFailures = 0;
          resolve();
          this.#grantLeases();
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
        const crashed = new WorkerCrashedError(
          `worker exited with code ${code} while running a job`,
          {
            cause: slot.lastError,
          },
        );
        if (slot.job && !slot.job.settled) {
          slot.job.reject(crashed);
        }
        // Leased jobs relied on state that died with the worker.
        const gone = new WorkerCrashedError(`the leased worker exited with code ${code}`, {
          cause: slot.lastError,
        });
        for (const job of [...slot.pinned.high, ...slot.pinned.low]) {
          job.reject(gone);
        }
        slot.pinned = { high: [], low: [] };
        this.#endLeases(slot, gone);
        if (!slot.retiring) {
          this.#options.logger.warn({ code, err: slot.lastError }, "worker exited unexpectedly");
        }
        this.#replace();
      });
    });
  }

  #onMessage(
    slot: Slot<Request, Result, Chunk>,
    message: Exclude<WorkerMessage<Result, Chunk>, { type: "ready" }>,
  ) {
    if (message.type === "log") {
      this.#options.logger[message.level]({ threadId: slot.worker.threadId }, message.message);
      return;
    }
    const job = slot.job;
    if (job === undefined || job.id !== message.id) {
      return;
    }
    if (message.type === "chunk") {
      if (!job.settled) {
        job.onChunk?.(message.chunk);
      }
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

  /** The queued job a free slot should run next: high before low, oldest first, pinned or not. */
  #next(slot: Slot<Request, Result, Chunk>): Job<Request, Result, Chunk> | undefined {
    for (const priority of ["high", "low"] as const) {
      const own = slot.pinned[priority][0];
      const shared = this.#queues[priority][0];
      if (own !== undefined && (shared === undefined || own.id < shared.id)) {
        return slot.pinned[priority].shift();
      }
      if (shared !== undefined) {
        return this.#queues[priority].shift();
      }
    }
    return undefined;
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (!slot.ready || slot.retiring || slot.job) {
        continue;
      }
      const job = this.#next(slot);
      if (job === undefined) {
        continue;
      }
      job.queue = undefined;
      job.slot = slot;
      slot.job = job;
      slot.timer = setTimeout(() => {
        job.reject(new JobTimeoutError(`job ran longer than ${this.#options.jobTimeoutMs} ms`));
        this.#retire(slot);
      }, this.#options.jobTimeoutMs);
      try {
        const message: JobMessage<Request> = { id: job.id, request: job.request };
        slot.worker.postMessage(message, job.transfer);
      } catch (error) {
        clearTimeout(slot.timer);
        slot.job = undefined;
        job.reject(error);
      }
    }
  }

  #grantLeases(): void {
    while (this.#leaseWaiters.length > 0) {
      let best: Slot<Request, Result, Chunk> | undefined;
      for (const slot of this.#slots) {
        if (!slot.ready || slot.retiring || slot.leases.size >= this.#maxLeases) {
          continue;
        }
        if (best === undefined || slot.leases.size < best.leases.size) {
          best = slot;
        }
      }
      if (best === undefined) {
        return;
      }
      const lease = new Lease<Request, Result, Chunk>(best, (released, notice) =>
        this.#release(released, notice),
      );
      best.leases.add(lease);
      this.#leaseWaiters.shift()?.resolve(lease);
    }
  }

  #release(lease: Lease<Request, Result, Chunk>, notice?: Request): void {
    const slot = lease.slot;
    if (slot === undefined) {
      return;
    }
    lease.slot = undefined;
    lease.ended = new Error("the lease was released");
    slot.leases.delete(lease);
    if (notice !== undefined && !slot.retiring) {
      const message: JobMessage<Request> = { id: 0, request: notice, notice: true };
      try {
        slot.worker.postMessage(message);
      } catch (error) {
        this.#options.logger.warn({ err: error }, "could not send a notice to a worker");
      }
    }
    this.#grantLeases();
  }

  #endLeases(slot: Slot<Request, Result, Chunk>, reason: Error): void {
    for (const lease of slot.leases) {
      lease.slot = undefined;
      lease.ended = reason;
    }
    slot.leases.clear();
  }

  /** Terminates a worker whose state can no longer be trusted; its exit triggers a replacement. */
  #retire(slot: Slot<Request, Result, Chunk>): void {
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
        // Nothing is left to run queued jobs or grant leases; fail them rather than leave callers hanging.
        for (const job of [...this.#queues.high, ...this.#queues.low]) {
          job.reject(error);
        }
        this.#queues = { high: [], low: [] };
        for (const waiter of this.#leaseWaiters) {
          waiter.reject(error);
        }
        this.#leaseWaiters = [];
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
