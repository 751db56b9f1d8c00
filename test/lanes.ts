import { readdirSync } from "node:fs";
import { join, posix } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Which test file runs in which lane. A file's lane is the lane of its longest matching pattern
 * (a folder ending in "/" or one file, relative to test/); no pattern is in two lanes, so every
 * file is in exactly one (test/unit/test-lanes.test.ts checks it).
 *
 * - fast: `npm test`. In-process suites that need nothing but Node and `npm ci`: the embedded
 *   store and the in-memory PGlite (test/kit/lane.ts), no child process, server or browser.
 * - system: in-process suites that need a system package or start a process (redis-server,
 *   PostgreSQL, Chromium, ffmpeg, openssl, promtool, helm, the CLI), or systems sharing a Redis.
 * - faults: the fault suites (test/faults), in a lane of their own beside the others.
 * - alone: fault suites that run after every other lane, on a quieter machine: one bounds how
 *   long fresh requests wait after a socket burst, one drives 1,000 streams through one process.
 *
 * `npm run test:all` runs them all, the fast and system lanes on Redis and PostgreSQL too.
 */
export const LANES = {
  fast: ["unit/", "contract/", "gateway/", "speech/", "enforcement/", "fuzz/"],
  system: [
    "service/",
    "request-log/",
    "cli/",
    "console/",
    "deploy/",
    // ffmpeg decodes what they encode
    "unit/speech/container-encoder.test.ts",
    "contract/openai-speech.test.ts",
    "speech/audio-formats.test.ts",
    // runs test/system-packages.sh, which test:all runs first
    "unit/system-packages.test.ts",
    // two systems or replicas sharing one Redis, or a Redis stopped underneath the system
    "gateway/key-cache.test.ts",
    "gateway/store-outage.test.ts",
    "enforcement/budget-alerts.test.ts",
    "enforcement/key-limit-reset-and-expiry.test.ts",
    "enforcement/rate-limits-and-account.test.ts",
    "enforcement/replicas.test.ts",
    // promtool and split processes
    "enforcement/dashboards-and-alerts.test.ts",
  ],
  faults: ["faults/"],
  alone: ["faults/connection-lockout.test.ts", "faults/log-flood.test.ts"],
} as const satisfies Record<string, readonly string[]>;

export type Lane = keyof typeof LANES;

/**
 * Suites test:all runs a second time, beside their lane: over the loopback gRPC hop between the
 * gateway and the services (the ones that exercise it: speech streaming and errors, auth, error
 * replies, the SDK contracts), and on the Node.js the image runs (test/image-node).
 */
export const RERUNS = {
  "grpc-hop": [
    "contract/",
    "gateway/auth-and-routing.test.ts",
    "gateway/guardrails-errors.test.ts",
    "gateway/guardrail-versions.test.ts",
    "gateway/guardrail-policy-versions.test.ts",
    "speech/streaming.test.ts",
    "speech/cancellation.test.ts",
    "speech/upstream-errors.test.ts",
    "speech/error-details.test.ts",
  ],
  "image-node": ["unit/", "gateway/", "speech/"],
} as const satisfies Record<string, readonly string[]>;

/**
 * The fast lane's two halves, one mocha process each (test/fast-lane.sh): each process starts the
 * shared speech and enforcement systems once, so folders stay together.
 */
export const FAST_FIRST_HALF = ["unit/", "gateway/", "fuzz/", "contract/"] as const;

const TEST_ROOT = fileURLToPath(new URL("../../test/", import.meta.url));

/** Every test file, relative to test/ (from the sources, so the build cannot hide one). */
export function testFiles(dir = TEST_ROOT, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => {
      const path = posix.join(prefix, e.name);
      if (e.isDirectory()) return testFiles(join(dir, e.name), path);
      return e.name.endsWith(".test.ts") ? [path] : [];
    })
    .sort();
}

export function matches(file: string, pattern: string): boolean {
  return pattern.endsWith("/") ? file.startsWith(pattern) : file === pattern;
}

/** The longest pattern of `patterns` that `file` matches, if any. */
function longestMatch(file: string, patterns: readonly string[]): string | undefined {
  return patterns
    .filter((p) => matches(file, p))
    .sort((a, b) => b.length - a.length)
    .at(0);
}

/** Each lane whose patterns `file` matches, by its longest matching pattern (longest first). */
export function candidateLanes(file: string): { lane: Lane; pattern: string }[] {
  return (Object.keys(LANES) as Lane[])
    .flatMap((lane) => {
      const pattern = longestMatch(file, LANES[lane]);
      return pattern ? [{ lane, pattern }] : [];
    })
    .sort((a, b) => b.pattern.length - a.pattern.length);
}

/** The lane `file` runs in (its longest matching pattern's), undefined when none matches. */
export function laneOf(file: string): Lane | undefined {
  return candidateLanes(file).at(0)?.lane;
}

/** The files of `lane`, or of a rerun selection (every file one of its patterns matches). */
export function filesOf(lane: Lane | keyof typeof RERUNS, files = testFiles()): string[] {
  if (lane in RERUNS) {
    const patterns: readonly string[] = RERUNS[lane as keyof typeof RERUNS];
    return files.filter((f) => patterns.some((p) => matches(f, p)));
  }
  return files.filter((f) => laneOf(f) === lane);
}

/** A test file's compiled path, for mocha: `unit/x.test.ts` -> `dist/test/unit/x.test.js`. */
export function compiled(file: string): string {
  return `dist/test/${file.replace(/\.ts$/, ".js")}`;
}
