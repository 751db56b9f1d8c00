import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { Cluster } from "ioredis";
import { freePort } from "./free-port.js";
import { spawnRedis } from "./redis-server.js";

const run = promisify(execFile);

export interface ThrowawayCluster {
  nodes: string[];
  client(): Cluster;
  stop(): Promise<void>;
}

/** Three throwaway cluster-mode redis-servers on free ports, joined into one cluster (no replicas). */
export async function startRedisCluster(): Promise<ThrowawayCluster> {
  const dir = mkdtempSync(join(tmpdir(), "railgate-cluster-"));
  const ports = [await freePort(), await freePort(), await freePort()];
  const procs = ports.map(
    (port) =>
      spawnRedis(port, dir, [
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        `nodes-${port}.conf`,
      ]).process,
  );
  const nodes = ports.map((p) => `127.0.0.1:${p}`);
  for (const port of ports) {
    // 20 s: on a machine busy with other suites a redis-server can take seconds to answer.
    const deadline = Date.now() + 20_000;
    for (;;) {
      try {
        await run("redis-cli", ["-p", String(port), "ping"]);
        break;
      } catch {
        if (Date.now() > deadline) throw new Error(`cluster node ${port} did not start`);
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  await run("redis-cli", [
    "--cluster",
    "create",
    ...nodes,
    "--cluster-replicas",
    "0",
    "--cluster-yes",
  ]);
  for (let i = 0; ; i++) {
    const { stdout } = await run("redis-cli", ["-p", String(ports[0]), "cluster", "info"]);
    if (stdout.includes("cluster_state:ok")) break;
    if (i > 200) throw new Error("cluster did not become ready");
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    nodes,
    client: () =>
      new Cluster(nodes.map((n) => ({ host: "127.0.0.1", port: Number(n.split(":")[1]) }))),
    stop: async () => {
      for (const p of procs) p.kill("SIGKILL");
      await Promise.all(
        procs.map((p) => new Promise((r) => (p.exitCode !== null ? r(null) : p.once("exit", r)))),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
