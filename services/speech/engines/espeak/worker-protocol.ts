/** What a pool sends a worker: one job at a time. */
export interface JobMessage<Request> {
  id: number;
  request: Request;
}

export interface SerializedError {
  name: string;
  message: string;
}

export type LogLevel = "info" | "warn" | "error";

/** What a worker sends back. It says `ready` once, after its (slow) setup has finished. */
export type WorkerMessage<Result> =
  | { type: "ready" }
  | { type: "result"; id: number; result: Result }
  /** `fatal` failures may have left the worker's wasm state corrupt, so the pool replaces it. */
  | { type: "failed"; id: number; error: SerializedError; fatal: boolean }
  | { type: "log"; level: LogLevel; message: string };
