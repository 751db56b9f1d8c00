import { parentPort } from "node:worker_threads";
import type { JobMessage, LogLevel, WorkerMessage } from "./worker-protocol.js";

/** Thrown by a job handler for bad input: the job fails but the worker stays healthy. */
export class JobInputError extends Error {
  override readonly name: string = "JobInputError";
}

export interface JobOutput<Result> {
  result: Result;
  /** Buffers to move to the parent instead of copying them. */
  transfer?: ArrayBuffer[];
}

export type JobHandler<Request, Result> = (request: Request) => JobOutput<Result>;

export type WorkerLog = (level: LogLevel, message: string) => void;

/**
 * Runs inside a worker thread: performs `setup` once, then answers jobs one by one with the handler
 * it returns. Handlers are synchronous on purpose: a worker runs exactly one job at a time.
 * A rejected setup rejects this promise, which kills the worker before it ever reports ready.
 */
export async function serveJobs<Request, Result>(
  setup: (log: WorkerLog) => Promise<JobHandler<Request, Result>>,
): Promise<void> {
  const port = parentPort;
  if (port === null) {
    throw new Error("serveJobs must run inside a worker thread");
  }
  const send = (message: WorkerMessage<Result>, transfer?: ArrayBuffer[]) =>
    port.postMessage(message, transfer);

  const handle = await setup((level, message) => send({ type: "log", level, message }));

  port.on("message", ({ id, request }: JobMessage<Request>) => {
    let output: JobOutput<Result>;
    try {
      output = handle(request);
    } catch (error) {
      const { name, message } =
        error instanceof Error ? error : { name: "Error", message: String(error) };
      send({
        type: "failed",
        id,
        error: { name, message },
        fatal: !(error instanceof JobInputError),
      });
      return;
    }
    send({ type: "result", id, result: output.result }, output.transfer);
  });
  send({ type: "ready" });
}
