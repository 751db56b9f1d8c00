/** The soak's settings, from its environment (docs/failures.md lists them). */
export interface SoakConfig {
  minutes: number;
  /** "cluster": a three-primary Redis Cluster; "standalone": one redis-server. */
  redis: "cluster" | "standalone";
  /** Concurrent speech clients. */
  concurrency: number;
  /** Concurrent management writers. */
  writers: number;
  /** Seconds between two faults, drawn uniformly from this range. */
  chaosEverySeconds: [number, number];
  /** How long after the load stops the system has to settle, and how old a lease may be. */
  recoverySeconds: number;
  replicas: { gateway: number; guardrail: number; speech: number };
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a number >= 0, got "${raw}"`);
  return n;
}

function range(env: NodeJS.ProcessEnv, name: string, fallback: [number, number]): [number, number] {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const m = /^(\d+(?:\.\d+)?)-(\d+(?:\.\d+)?)$/.exec(raw);
  if (!m || Number(m[1]) > Number(m[2]) || Number(m[1]) <= 0) {
    throw new Error(`${name} must be "<min>-<max>" seconds (e.g. 20-40), got "${raw}"`);
  }
  return [Number(m[1]), Number(m[2])];
}

export function loadSoakConfig(env: NodeJS.ProcessEnv = process.env): SoakConfig {
  const redis = env.SOAK_REDIS || "cluster";
  if (redis !== "cluster" && redis !== "standalone") {
    throw new Error(`SOAK_REDIS must be "cluster" or "standalone", got "${redis}"`);
  }
  return {
    minutes: positive(env, "SOAK_MINUTES", 10),
    redis,
    concurrency: Math.max(1, Math.round(positive(env, "SOAK_CONCURRENCY", 8))),
    writers: Math.max(1, Math.round(positive(env, "SOAK_WRITERS", 2))),
    chaosEverySeconds: range(env, "SOAK_CHAOS_EVERY_S", [20, 40]),
    recoverySeconds: positive(env, "SOAK_RECOVERY_S", 45),
    replicas: { gateway: 2, guardrail: 2, speech: 2 },
  };
}
