import { setTimeout as sleep } from "node:timers/promises";

export { sleep };

/**
 * Asks `attempt` up to `times` times, with a short pause between, until
 * `done` holds of its answer; returns the last answer either way, for the
 * caller to assert on. Never asserts on time.
 */
export async function pollUntil<T>(
  attempt: () => Promise<T>,
  done: (value: T) => boolean,
  times = 100,
  pauseMs = 50,
): Promise<T> {
  let value = await attempt();
  for (let i = 1; i < times && !done(value); i++) {
    await sleep(pauseMs);
    value = await attempt();
  }
  return value;
}
