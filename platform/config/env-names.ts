import { configSchema, RENAMED_VARIABLES } from "./config.js";

/**
 * Environment variables that look like Railgate settings but are none: a typo
 * (RAILGATE_MANAGMENT_KEY) would otherwise be ignored in silence, and the system start without
 * what the operator meant to set. Warned about at start-up (platform/lifecycle.ts), by name
 * only: the value may be a secret.
 */

/** Read outside the configuration schema: by the CLI, docker-compose, and the test suites. */
const READ_ELSEWHERE = [
  "RAILGATE_KEY",
  "RAILGATE_CATALOG_PATH",
  "RAILGATE_TEST_TRANSPORT",
  "RAILGATE_TEST_LANE",
  "RAILGATE_TEST_TIMES",
];

/** Every name Railgate reads, the deprecated ones included. */
export const KNOWN_VARIABLES: readonly string[] = [
  ...Object.keys(configSchema.shape),
  ...Object.keys(RENAMED_VARIABLES),
  ...READ_ELSEWHERE,
].sort();

/**
 * Prefixes that are Railgate's own (RAILGATE_, and those its settings had before they moved
 * under it): any unknown name under them is warned about. The other
 * prefixes of known names are shared with the rest of the world (OTEL_ is the OpenTelemetry
 * SDK's, which reads many standard variables of its own; HTTP_PROXY, MAX_, LOG_, RATE_...):
 * names under those are warned about only when they are a near miss of a name we read.
 */
export const OWN_PREFIXES = ["RAILGATE_", "GATEWAY_", "GUARDRAIL_", "SPEECH_", "REDIS_", "HTTP_"];

/** Standard names under our own prefixes: never ours, never a typo of ours. */
const STANDARD = new Set(["HTTP_PROXY"]);

/** A near miss: at most this many single-character edits from a known name. */
const NEAR = 2;

/** Levenshtein distance, one row at a time (names are short). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(
        Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost),
      );
    }
    previous = row;
  }
  return previous[b.length] ?? 0;
}

/** The known name closest to `name`, with its distance (the first in sort order on a tie). */
export function closestKnown(name: string): { name: string; distance: number } {
  let best = { name: KNOWN_VARIABLES[0] ?? "", distance: Number.POSITIVE_INFINITY };
  for (const known of KNOWN_VARIABLES) {
    const distance = editDistance(name, known);
    if (distance < best.distance) best = { name: known, distance };
  }
  return best;
}

/**
 * Variables Kubernetes (service links) and Docker links set for every service beside a pod:
 * a Service named "redis" or "railgate-gateway" brings REDIS_PORT=tcp://..., REDIS_SERVICE_HOST,
 * RAILGATE_GATEWAY_PORT_8080_TCP_ADDR and so on. Recognised by their shape (and value).
 */
function isServiceLink(name: string, value: string | undefined): boolean {
  return (
    /_SERVICE_HOST$|_SERVICE_PORT(_[A-Z0-9_]+)?$|_PORT_\d+_(TCP|UDP|SCTP)(_(ADDR|PORT|PROTO))?$/.test(
      name,
    ) ||
    (/_PORT$/.test(name) && /^(tcp|udp|sctp):\/\//.test(value ?? ""))
  );
}

export interface UnknownVariable {
  name: string;
  /** The known name it is most likely a typo of, when one is close enough to say so. */
  suggestion?: string;
}

/** Unknown names under our prefixes, and near misses of known names under any prefix. */
export function unknownVariables(env: NodeJS.ProcessEnv): UnknownVariable[] {
  const known = new Set(KNOWN_VARIABLES);
  const found: UnknownVariable[] = [];
  for (const name of Object.keys(env).sort()) {
    if (known.has(name) || STANDARD.has(name) || isServiceLink(name, env[name])) continue;
    const ours = OWN_PREFIXES.some((p) => name.startsWith(p));
    const nearest = closestKnown(name);
    // A near miss of a deprecated name is pointed at the name that replaces it.
    const closest = { ...nearest, name: RENAMED_VARIABLES[nearest.name] ?? nearest.name };
    // A third of the name at most: "REDIS_HOST" is no typo of "REDIS_URL".
    const close = closest.distance <= Math.max(NEAR, Math.floor(name.length / 3));
    if (ours) found.push(close ? { name, suggestion: closest.name } : { name });
    else if (closest.distance <= NEAR && name.length >= 6) {
      found.push({ name, suggestion: closest.name });
    }
  }
  return found;
}
