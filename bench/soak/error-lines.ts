import type { ClusterDeployment, ReplicaKind } from "../../test/kit/cluster-deployment.js";
import type { Child } from "../../test/kit/processes.js";

/**
 * The error lines (pino level >= 50) every replica prints, grouped by kind and message: what a
 * failed check points at. Replicas started by the chaos are picked up by watch().
 */
export class ErrorLines {
  private readonly watched = new WeakSet<Child>();
  private readonly groups = new Map<string, number>();

  watch(deployment: ClusterDeployment): void {
    for (const kind of ["gateway", "guardrail", "speech"] as ReplicaKind[]) {
      for (const r of deployment.replicas[kind]) {
        if (this.watched.has(r.child)) continue;
        this.watched.add(r.child);
        let pending = "";
        r.child.process.stdout?.on("data", (chunk: Buffer) => {
          const lines = (pending + chunk.toString("utf8")).split("\n");
          pending = lines.pop() ?? "";
          for (const line of lines) this.take(kind, line);
        });
      }
    }
  }

  private take(kind: ReplicaKind, line: string): void {
    if (!line.includes('"level":5') && !line.includes('"level":6')) return;
    try {
      const entry = JSON.parse(line) as { level: number; msg?: string; err?: { message?: string } };
      if (entry.level < 50) return;
      const what = `${kind}: ${entry.msg ?? ""}${entry.err?.message ? `: ${entry.err.message.slice(0, 160)}` : ""}`;
      this.groups.set(what, (this.groups.get(what) ?? 0) + 1);
    } catch {
      // not a log line
    }
  }

  render(max = 12): string[] {
    return [...this.groups]
      .sort(([, a], [, b]) => b - a)
      .slice(0, max)
      .map(([what, n]) => `  ${String(n).padStart(5)} x ${what}`);
  }
}
