import { readFileSync } from "node:fs";
import { type Child, runningChildPids } from "../test/kit/processes.js";

/**
 * Peak resident set size of a process in MB: the kernel's high-water mark
 * (VmHWM), which covers every thread, so engine workers count too.
 */
export function peakRssMb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /^VmHWM:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}

/**
 * CPU time (user + system, all threads) a process has used so far, in ms;
 * the difference over a run, divided by requests, is the server's CPU cost
 * per request, which on a shared 2-core machine explains latency better than
 * wall time alone.
 */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may contain spaces) start at "state".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}
/** USER_HZ: 100 on every Linux architecture Node supports. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Non-idle CPU time of the whole machine so far (all CPUs), in ms. */
export function machineBusyMs(): number | undefined {
  try {
    const cpu = readFileSync("/proc/stat", "utf8")
      .split("\n")[0]
      ?.trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    if (!cpu || cpu.length < 5) return undefined;
    // user nice system idle iowait irq softirq steal ...: everything but idle and iowait.
    const busy = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
    return (busy * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** CPU time of the bench itself plus every child it started, in ms. */
export function ownCpuMs(): number {
  let ms = (process.cpuUsage().user + process.cpuUsage().system) / 1000;
  for (const pid of runningChildPids()) ms += cpuTimeMs(pid) ?? 0;
  return ms;
}

/** Stops children in parallel; errors of one do not keep the others alive. */
export async function stopAll(list: (Child | undefined)[]): Promise<void> {
  await Promise.allSettled(list.map((c) => c?.stop()));
}
