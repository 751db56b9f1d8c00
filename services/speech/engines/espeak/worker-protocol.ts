/**
 * What a pool sends a worker. `notice` messages are one-way: the worker handles them in order with
 * its jobs (after the one it is running) and answers nothing; they carry no job id of their own.
 */
export interface JobMessage<Request> {
  id: number;
  request: Request;
  notice?: boolean;
}

/** What a pool hands each worker when it starts it (as `workerData`). */
export interface WorkerSetup {
  /**
   * One Int32 the pool sets to the id of a running job it no longer wants: a worker polls it from
   * inside long jobs (between blocks of audio) and stops early, instead of finishing work nobody
   * will read.
   */
  cancel: SharedArrayBuffer;
  /** Whatever the pool's owner passes to every worker (e.g. data shared between them). */
  data?: unknown;
}

export interface SerializedError {
  name: string;
  message: string;
}

export type LogLevel = "info" | "warn" | "error";

/** What a worker sends back. It says `ready` once, after its (slow) setup has finished. */
export type WorkerMessage<Result, Chunk = never> =
  | { type: "ready" }
  /** Part of a job's output, sent before its result so the caller can use it straight away. */
  | { type: "chunk"; id: number; chunk: Chunk }
  | { type: "result"; id: number; result: Result }
  /** `fatal` failures may have left the worker's wasm state corrupt, so the pool replaces it. */
  | { type: "failed"; id: number; error: SerializedError; fatal: boolean }
  | { type: "log"; level: LogLevel; message: string };
