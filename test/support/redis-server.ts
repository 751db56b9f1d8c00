import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";

export interface ThrowawayRedis {
  url: string;
  port: number;
  /** A fresh client; the caller closes it. */
  client(): Redis;
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * A private redis-server on a free port, with no persistence: tests never
 * touch the machine's shared Redis on 6379.
 */
export async function startRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "railgate-redis-"));
  const proc: ChildProcess = spawn(
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
    { stdio: "ignore" },
  );
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on("error", () => {});
  for (let i = 0; ; i++) {
    try {
      await probe.connect();
      await probe.ping();
      break;
    } catch {
      if (i > 100) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url,
    port,
    client: () => new Redis(url),
    flush: async () => {
      await probe.flushall();
    },
    stop: async () => {
      probe.disconnect();
      proc.kill("SIGKILL");
      await new Promise((r) => proc.once("exit", r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
