import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./free-port.js";
import { type Child, makeTempDir, removeTempDir, spawnChild } from "./processes.js";

export interface ThrowawayRedis {
  url: string;
  port: number;
  /** A fresh client; the caller closes it. */
  client(): Redis;
  flush(): Promise<void>;
  stop(): Promise<void>;
  /** SIGSTOP: the server keeps its sockets open but answers nothing (a frozen Redis). */
  freeze(): void;
  /** SIGCONT after freeze(): it answers again, including what was sent meanwhile. */
  thaw(): void;
  /** SIGKILL: gone at once, connections refused until restart(). */
  kill(): Promise<void>;
  /** A new, empty redis-server on the same port (killing the old one first if it runs). */
  restart(): Promise<void>;
}

/** A loopback redis-server without persistence in `dir`; `extra` adds options (cluster mode). */
export function spawnRedis(port: number, dir: string, extra: string[] = []): Child {
  // Tracked by processes.ts: a run that dies or is interrupted still kills it.
  return spawnChild(
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
      ...extra,
    ],
    process.env,
  );
}

async function waitReady(url: string, port: number): Promise<Redis> {
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
      return probe;
    } catch {
      if (i > 100) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * A private redis-server on a free port, with no persistence: tests and the
 * bench never touch the machine's shared Redis on 6379 (and fsync or
 * snapshots cannot disturb the bench's numbers). Fault tests freeze, kill and
 * restart it (the restarted server is empty, as after a crash without
 * persistence).
 */
export async function startRedis(): Promise<ThrowawayRedis> {
  const port = await freePort();
  const dir = makeTempDir("railgate-redis-");
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined = spawnRedis(port, dir).process;
  let probe = await waitReady(url, port);
  const kill = async () => {
    const p = proc;
    proc = undefined;
    probe.disconnect();
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise((r) => p.once("exit", r));
    p.kill("SIGKILL");
    await exited;
  };
  return {
    url,
    port,
    client: () => new Redis(url),
    flush: async () => {
      await probe.flushall();
    },
    stop: async () => {
      await kill();
      removeTempDir(dir);
    },
    freeze: () => {
      proc?.kill("SIGSTOP");
    },
    thaw: () => {
      proc?.kill("SIGCONT");
    },
    kill,
    restart: async () => {
      await kill();
      proc = spawnRedis(port, dir).process;
      probe = await waitReady(url, port);
    },
  };
}
