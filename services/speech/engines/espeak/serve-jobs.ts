import { parentPort, workerData } from "node:worker_threads";
import type { JobMessage, LogLevel, WorkerMessage, WorkerSetup } from "./worker-protocol.js";

/** Thrown by a job handler for bad input: the job fails but the worker stays healthy. */
export class JobInputError extends Error {
  override readonly name: string = "JobInputError";
}

export interface JobOutput<Result> {
  result: Result;
  /** Buffers to move to the parent instead of copying them. */
  transfer?: ArrayBuffer[];
}

/** What a handler gets besides the request. */
export interface JobContext<Chunk> {
  /** Sends part of the output now, ahead of the result (a no-op for notices). */
  emit(chunk: Chunk, transfer?: ArrayBuffer[]): void;
  /** True once the pool has given up on this job: stop early and return whatever is at hand. */
  cancelled(): boolean;
}

export type JobHandler<Request, Result, Chunk = never> = (
  request: Request,
  context: JobContext<Chunk>,
) => JobOutput<Result> | Promise<JobOutput<Result>>;

export type WorkerLog = (level: LogLevel, message: string) => void;

/**
 * Runs inside a worker thread: performs `setup` once, then answers jobs one by one with the handler
 * it returns. Messages are handled strictly in order, one at a time, even when a handler is async
 * (a notice must never overtake the job before it). A rejected setup rejects this promise, which
 * kills the worker before it ever reports ready.
 */
export async function serveJobs<Request, Result, Chunk = never>(
  setup: (log: WorkerLog, data: unknown) => Promise<JobHandler<Request, Result, Chunk>>,
): Promise<void> {
  const port = parentPort;
  if (port === null) {
    throw new Error("serveJobs must run inside a worker thread");
  }
  const send = (message: WorkerMessage<Result, Chunk>, transfer?: ArrayBuffer[]) =>
    port.postMessage(message, transfer);
  const log: WorkerLog = (level, message) => send({ type: "log", level, message });
  const { cancel, data } = (workerData ?? {}) as Partial<WorkerSetup>;
  const cancelled = cancel ? new Int32Array(cancel) : undefined;

  const handle = await setup(log, data);

  const serve = async ({ id, request, notice = false }: JobMessage<Request>) => {
    const context: JobContext<Chunk> = {
      emit: (chunk, transfer) => {
        if (!notice) send({ type: "chunk", id, chunk }, transfer);
      },
      cancelled: () => !notice && cancelled !== undefined && Atomics.load(cancelled, 0) === id,
    };
    let output: JobOutput<Result>;
    try {
      output = await handle(request, context);
    } catch (error) {
      const { name, message } =
        error instanceof Error ? error : { name: "Error", message: String(error) };
      if (notice) {
        log("warn", `notice failed: ${name}: ${message}`);
        return;
      }
      send({
        type: "failed",
        id,
        error: { name, message },
        fatal: !(error instanceof JobInputError),
      });
      return;
    }
    if (notice) {
      return;
    }
    try {
      send({ type: "result", id, result: output.result }, output.transfer);
    } catch (error) {
      // A result that cannot be posted (not cloneable) would leave the caller waiting forever.
      const { name, message } = error instanceof Error ? error : new Error(String(error));
      send({ type: "failed", id, error: { name, message }, fatal: true });
    }
  };

  let queue = Promise.resolve();
  port.on("message", (message: JobMessage<Request>) => {
    queue = queue
      .then(() => serve(message))
      .catch((error: unknown) => log("error", `could not answer a job: ${String(error)}`));
  });
  send({ type: "ready" });
}
