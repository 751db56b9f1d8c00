import type { ClusterDeployment, ReplicaKind } from "../../test/kit/cluster-deployment.js";
import type { SoakRedis } from "./redis-nodes.js";

/** One fault the soak injected, and how long the target took to be back. */
export interface Fault {
  atSeconds: number;
  target: string;
  action: "kill" | "freeze";
  /** kill: until the replacement served; freeze: how long it was stopped. */
  downMs: number;
  /** Bringing it back failed (the soak goes on; the table says so). */
  error?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (min: number, max: number) => min + Math.random() * (max - min);

interface Target {
  name: string;
  pid(): number | undefined;
  /** SIGKILL, then back: a fresh replica in the balancer, or the node restarted on its port. */
  killAndRestart(): Promise<void>;
}

function targets(deployment: ClusterDeployment, redis: SoakRedis): Target[] {
  const replicas = (["gateway", "guardrail", "speech"] as ReplicaKind[]).flatMap((kind) =>
    deployment.replicas[kind].map((_, i) => ({
      name: `${kind}[${i}]`,
      pid: () => deployment.replicas[kind][i]?.child.pid,
      async killAndRestart() {
        deployment.replicas[kind][i]?.child.process.kill("SIGKILL");
        // As an orchestrator notices a dead pod and starts another.
        await sleep(1_000);
        await deployment.replace(kind, i);
      },
    })),
  );
  const nodes = redis.nodes.map((node, i) => ({
    name: `redis[${i}]`,
    pid: () => node.child.pid,
    async killAndRestart() {
      await node.kill();
      await sleep(between(1_000, 3_000));
      await node.restart();
    },
  }));
  return [...replicas, ...nodes];
}

/**
 * Every `everySeconds` (drawn from the range) one random process or Redis node is killed and
 * brought back, or frozen (SIGSTOP) for 2-6 s and thawed, until stop(); one fault at a time.
 */
export class Chaos {
  readonly faults: Fault[] = [];
  private running = true;
  private wake: () => void = () => {};
  private loop?: Promise<void>;
  private readonly startedAt = Date.now();

  constructor(
    private readonly deployment: ClusterDeployment,
    private readonly redis: SoakRedis,
    private readonly everySeconds: [number, number],
  ) {}

  start(): void {
    this.loop = this.run();
  }

  /** Ends the loop once the fault in progress (if any) is undone. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  private async pause(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async run(): Promise<void> {
    for (;;) {
      await this.pause(between(...this.everySeconds) * 1000);
      if (!this.running) return;
      const all = targets(this.deployment, this.redis);
      const target = all[Math.floor(Math.random() * all.length)] as Target;
      const action = Math.random() < 0.5 ? "kill" : "freeze";
      const fault: Fault = {
        atSeconds: Math.round((Date.now() - this.startedAt) / 1000),
        target: target.name,
        action,
        downMs: 0,
      };
      const began = Date.now();
      console.log(`[soak] ${fault.atSeconds} s: ${action} ${target.name} (pid ${target.pid()})`);
      try {
        if (action === "kill") {
          await target.killAndRestart();
        } else {
          const pid = target.pid();
          if (pid !== undefined) process.kill(pid, "SIGSTOP");
          await sleep(between(2_000, 6_000));
          if (pid !== undefined) process.kill(pid, "SIGCONT");
        }
      } catch (err) {
        fault.error = String(err).split("\n")[0];
        console.log(`[soak] bringing ${target.name} back failed: ${fault.error}`);
      }
      fault.downMs = Date.now() - began;
      this.faults.push(fault);
    }
  }
}
