/** The retry schedule of deliveries (RAILGATE_WEBHOOK_BACKOFF_BASE_MS, _MAX_MS, RAILGATE_WEBHOOK_MAX_AGE_MS). */
export interface BackoffSettings {
  baseMs: number;
  maxMs: number;
  /** After this long since the event was created, a failed attempt is the last one. */
  maxAgeMs: number;
}

/**
 * The wait after failed attempt `attempts` (1 = the first): exponential
 * (base, 2 base, 4 base ... capped at max) with "equal jitter" (half fixed,
 * half random), so receivers that failed together are not retried in lock-step
 * and the wait still grows. `random` is injectable for tests.
 */
export function retryDelayMs(
  attempts: number,
  settings: Pick<BackoffSettings, "baseMs" | "maxMs">,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const ceiling = Math.min(settings.maxMs, settings.baseMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/**
 * When to try a failed delivery again, or null when the next attempt would
 * come after the event's maximum age: the delivery then fails for good.
 */
export function nextAttemptAt(
  createdAt: Date,
  attempts: number,
  now: Date,
  settings: BackoffSettings,
  random: () => number = Math.random,
): Date | null {
  const next = now.getTime() + retryDelayMs(attempts, settings, random);
  return next > createdAt.getTime() + settings.maxAgeMs ? null : new Date(next);
}
