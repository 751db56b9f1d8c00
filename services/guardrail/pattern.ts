import { RE2JS } from "re2js";

/**
 * Custom filter patterns run on RE2 (re2js): matching time is linear in the
 * input, so no pattern can stall a request. Patterns RE2 cannot run
 * (backreferences, lookaround) are rejected instead of falling back.
 * Returns the reason the pattern is unusable, or undefined when it compiles.
 */
export function patternProblem(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    return `${detail} (patterns run on a linear-time RE2 engine: backreferences and lookaround are not supported)`;
  }
}
