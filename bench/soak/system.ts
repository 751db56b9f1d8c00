import { rmSync } from "node:fs";
import {
  type ClusterDeployment,
  startClusterDeployment,
} from "../../test/kit/cluster-deployment.js";
import { createTestDatabase, type TestDatabase } from "../../test/kit/databases.js";
import { FakeOpenAi } from "../../test/kit/fake-openai.js";
import { makeTempDir } from "../../test/kit/processes.js";
import { writeBenchCatalog } from "../system-process.js";
import type { SoakConfig } from "./config.js";
import { type SoakRedis, startSoakRedis } from "./redis-nodes.js";

/** Everything the soak runs: Redis, PostgreSQL, the upstream and the replicas behind balancers. */
export interface SoakSystem {
  redis: SoakRedis;
  database: TestDatabase;
  deployment: ClusterDeployment;
  /** The gateways' balancer, what every client uses. */
  url: string;
  stop(): Promise<void>;
}

export async function startSoakSystem(config: SoakConfig): Promise<SoakSystem> {
  const [redis, database] = await Promise.all([
    startSoakRedis(config.redis),
    createTestDatabase("postgres"),
  ]);
  // A clip in four pieces 40 ms apart: streams are in flight when a process is killed.
  const upstream = await new FakeOpenAi({
    chunks: 4,
    chunkDelayMs: 40,
    secondsPerChar: 0.01,
  }).start();
  const dir = makeTempDir("railgate-soak-");
  const cleanUp = async () => {
    await upstream.close();
    await database.dispose().catch(() => {});
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const deployment = await startClusterDeployment({
      redisClusterNodes: [],
      databaseUrl: database.url as string,
      gateways: config.replicas.gateway,
      guardrails: config.replicas.guardrail,
      speeches: config.replicas.speech,
      env: {
        ...redis.env,
        RAILGATE_SPEECH_CATALOG_FILE: writeBenchCatalog(
          dir,
          Number(new URL(upstream.baseUrl).port),
        ),
        RAILGATE_SHUTDOWN_GRACE_MS: "10000",
        // Seven processes, Redis and PostgreSQL on a small shared machine (as the scale-out test).
        RAILGATE_REDIS_COMMAND_TIMEOUT_MS: "5000",
        // Only the keys the soak limits on purpose refuse for rate.
        RAILGATE_RATE_LIMIT_PER_MINUTE: "1000000",
      },
    });
    return {
      redis,
      database,
      deployment,
      url: deployment.url,
      async stop() {
        await deployment.stop();
        await cleanUp();
      },
    };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
