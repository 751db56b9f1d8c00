export class UnknownVoiceError extends Error {
  override readonly name = "UnknownVoiceError";

  constructor(readonly voice: string) {
    super(`unknown eSpeak voice: ${JSON.stringify(voice)}`);
  }
}

/** A worker thread died (or was killed) while it held a job. */
export class WorkerCrashedError extends Error {
  override readonly name = "WorkerCrashedError";
}

/** A job ran past its deadline; its worker is terminated and replaced. */
export class JobTimeoutError extends Error {
  override readonly name = "JobTimeoutError";
}

/** A job threw inside its worker; `remoteName` is the name of the error it threw there. */
export class WorkerJobError extends Error {
  override readonly name = "WorkerJobError";

  constructor(
    message: string,
    readonly remoteName: string,
  ) {
    super(message);
  }
}
