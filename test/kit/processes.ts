import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * Every child a test or the bench starts (redis-server, a system process, a
 * bench peer), so that a failure or Ctrl-C anywhere still kills them all (by
 * pid, never by name) before the process exits.
 */
const children = new Set<ChildProcess>();

/** Scratch directories, removed on every way out (also Ctrl-C). */
const tempDirs = new Set<string>();

function killAllNow(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
}

/** A fresh directory under the OS temp dir; `removeTempDir` (or exit) deletes it. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  tempDirs.delete(dir);
}
// Last resort: 'exit' handlers must be synchronous, so stragglers get SIGKILL.
process.once("exit", killAllNow);
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    killAllNow();
    process.exit(130);
  });
}

export interface Child {
  process: ChildProcess;
  pid: number;
  /** stdout + stderr, kept (bounded) for error messages. */
  output(): string;
  /** Resolves with the first output line matching `re`, rejects if the child exits first. */
  waitForLine(re: RegExp, timeoutMs: number): Promise<string>;
  /** SIGTERM (so --cpu-prof can write its profile), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const MAX_OUTPUT = 64 * 1024;

export function spawnChild(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  options: {
    cwd?: string;
    /**
     * stdout + stderr go to this file instead of through the bench: for a
     * chatty server (a log line per request) whose output would otherwise
     * cost the load generator CPU during the measurement. `waitForLine` then
     * sees nothing.
     */
    outputFile?: string;
    /** Run as this user and group (a root test run starting postgres, which refuses root). */
    uid?: number;
    gid?: number;
  } = {},
): Child {
  const fd = options.outputFile === undefined ? undefined : openSync(options.outputFile, "a");
  const proc = spawn(command, args, {
    env,
    cwd: options.cwd,
    uid: options.uid,
    gid: options.gid,
    stdio: fd === undefined ? ["ignore", "pipe", "pipe"] : ["ignore", fd, fd],
  });
  if (fd !== undefined) closeSync(fd);
  if (proc.pid === undefined) throw new Error(`could not start ${command}`);
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  let piped = "";
  const output = () =>
    options.outputFile === undefined ? piped : tail(options.outputFile, MAX_OUTPUT);
  const lineWaiters = new Set<(line: string) => void>();
  let pending = "";
  const onData = (chunk: Buffer) => {
    const text = chunk.toString("utf8");
    piped = (piped + text).slice(-MAX_OUTPUT);
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) for (const w of lineWaiters) w(line);
  };
  proc.stdout?.on("data", onData);
  proc.stderr?.on("data", onData);
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));

  return {
    process: proc,
    pid: proc.pid,
    output,
    waitForLine(re, timeoutMs) {
      return new Promise((resolve, reject) => {
        const done = (fn: () => void) => {
          clearTimeout(timer);
          lineWaiters.delete(onLine);
          proc.off("exit", onExit);
          fn();
        };
        const onLine = (line: string) => {
          if (re.test(line)) done(() => resolve(line));
        };
        const onExit = (code: number | null, signal: string | null) =>
          done(() =>
            reject(
              new Error(
                `${command} ${args.join(" ")} exited (${code ?? signal}) before printing ${re}:\n${output().slice(-4000)}`,
              ),
            ),
          );
        const timer = setTimeout(
          () => done(() => reject(new Error(`timed out waiting for ${re} from ${command}`))),
          timeoutMs,
        );
        lineWaiters.add(onLine);
        proc.once("exit", onExit);
        // A line already printed counts too.
        for (const line of output().split("\n")) {
          if (re.test(line)) return done(() => resolve(line));
        }
      });
    },
    async stop(graceMs = 15_000) {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => {
        // Worth knowing: a killed process writes no CPU profile, and a slow shutdown is a finding.
        console.error(
          `[bench] ${command} (pid ${proc.pid}) still running ${graceMs} ms after SIGTERM: SIGKILL`,
        );
        proc.kill("SIGKILL");
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The last `bytes` of a file, as text ("" when it cannot be read). */
function tail(file: string, bytes: number): string {
  try {
    const text = readFileSync(file);
    return text.subarray(Math.max(0, text.byteLength - bytes)).toString("utf8");
  } catch {
    return "";
  }
}

/** Pids of the children still running (the bench adds their CPU time to its own). */
export function runningChildPids(): number[] {
  return [...children].flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
}
