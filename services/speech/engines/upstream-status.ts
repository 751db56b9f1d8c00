/**
 * The HTTP status an upstream answered, kept with the error an adapter throws for it (the
 * error's message is for the client and its cause for the log): routing reads it to decide on
 * a retry (429 and 5xx) and to record how an attempt failed.
 */
const statuses = new WeakMap<object, number>();

export function markUpstreamStatus<E extends object>(err: E, status: number): E {
  statuses.set(err, status);
  return err;
}

export function upstreamStatusOf(err: unknown): number | undefined {
  return typeof err === "object" && err !== null ? statuses.get(err) : undefined;
}
