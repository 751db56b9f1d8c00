import { Redis } from "ioredis";
import { type Child, freePort, makeTempDir, removeTempDir, spawnChild } from "./processes.js";

export interface BenchRedis {
  url: string;
  stop(): Promise<void>;
}

/**
 * A private redis-server on a free port, without persistence (same approach as
 * test/support/redis-server.ts): the bench never touches a shared Redis on 6379,
 * and fsync or snapshots cannot disturb the numbers.
 */
export async function startRedis(): Promise<BenchRedis> {
  const port = await freePort();
  const dir = makeTempDir("railgate-bench-redis-");
  let child: Child | undefined;
  try {
    child = spawnChild(
      "redis-server",
      [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--dir",
        dir,
      ],
      process.env,
    );
    const url = `redis://127.0.0.1:${port}`;
    await waitForPing(url);
    const running = child;
    return {
      url,
      stop: async () => {
        await running.stop(5_000);
        removeTempDir(dir);
      },
    };
  } catch (err) {
    await child?.stop(1_000);
    removeTempDir(dir);
    throw err;
  }
}

async function waitForPing(url: string): Promise<void> {
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  try {
    for (let i = 0; ; i++) {
      try {
        if (probe.status !== "ready") await probe.connect();
        await probe.ping();
        return;
      } catch {
        if (i > 100) throw new Error(`redis-server did not answer on ${url}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  } finally {
    probe.disconnect();
  }
}
