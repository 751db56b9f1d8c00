/**
 * Freezes an object graph in place (typed arrays cannot be frozen and are
 * left as they are). Used to prove that a message passed by reference is
 * never written to by the side that received it.
 */
export function deepFreeze<T>(value: T, seen = new WeakSet<object>()): T {
  if (value === null || typeof value !== "object" || ArrayBuffer.isView(value)) return value;
  if (seen.has(value) || Object.isFrozen(value)) return value;
  seen.add(value);
  for (const key of Reflect.ownKeys(value)) {
    deepFreeze((value as Record<string | symbol, unknown>)[key], seen);
  }
  return Object.freeze(value);
}
