/**
 * Returns a server stream's generator when its call is aborted. Connect stops
 * pulling the stream of a client that went away, and when the reset races a
 * message being written it never calls return() either: the generator would
 * stay suspended at a yield for good, and its finally blocks (the generation
 * record, the credit settlement, releasing the engine) would never run.
 * A step in flight finishes first (async generators queue their calls), and a
 * generator that has already finished ignores the call.
 */
export function returnOnAbort<T>(
  source: AsyncGenerator<T>,
  signal: AbortSignal,
): AsyncGenerator<T> {
  const stop = () => {
    source.return(undefined).catch(() => {});
  };
  if (signal.aborted) stop();
  else signal.addEventListener("abort", stop, { once: true });
  return source;
}
