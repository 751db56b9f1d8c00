import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { measurementWindows } from "./load.js";
import { type ProfileSummary, renderProfile, summarizeProfile } from "./profile.js";

/** Threads busy less than this share of a window are left out of the summaries. */
const BUSY_THREAD_SHARE = 0.05;

/**
 * Cuts every CPU profile the given processes wrote into `profileDir` (main thread and workers)
 * into one summary per measurement window, printed on stderr, so each measurement's hot
 * functions can be read on their own; whole-run summaries (start-up included) go next to the
 * profiles as .summary.txt. Used by `npm run bench` and `dist/bench/hot-path.js`.
 */
export function summarizeProfiles(profileDir: string, pids: number[]): ProfileSummary[] {
  const out: ProfileSummary[] = [];
  // Node's default name: CPU.<date>.<time>.<pid>.<thread id>.<sequence>.cpuprofile
  const files = readdirSync(profileDir)
    .map((name) => ({ name, m: /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(name) }))
    .filter((f) => f.m && pids.includes(Number(f.m[1])));
  for (const { name, m } of files) {
    const file = join(profileDir, name);
    const whole = summarizeProfile(file);
    writeFileSync(`${file}.summary.txt`, `${renderProfile(whole)}\n`);
    const thread = Number(m?.[2]) === 0 ? "main thread" : `worker thread ${m?.[2]}`;
    for (const w of measurementWindows.filter((x) => x.serverPid === Number(m?.[1]))) {
      const summary = summarizeProfile(file, { window: { ...w, label: `${w.label}, ${thread}` } });
      if (
        summary.wallMs <= 0 ||
        (summary.wallMs - summary.idleMs) / summary.wallMs < BUSY_THREAD_SHARE
      )
        continue;
      out.push(summary);
      console.error(
        renderProfile({
          ...summary,
          selfByFunction: summary.selfByFunction.slice(0, 15),
          inclusiveProject: summary.inclusiveProject.slice(0, 12),
        }),
      );
    }
  }
  return out;
}
