import { existsSync, readFileSync } from "node:fs";
import { compiled, FAST_FIRST_HALF, filesOf, LANES, matches, RERUNS } from "./lanes.js";

/**
 * For the lane scripts (test/fast-lane.sh, test/all-lanes.sh), after the build:
 *   files <lane or rerun> [1/2|2/2]  the lane's compiled files, one a line (fast: a half)
 *   slowest <times file> [n]         the n slowest files (10) of a run's file-times reporter
 */
function usage(): never {
  console.error(
    `usage: lanes-cli files <${[...Object.keys(LANES), ...Object.keys(RERUNS)].join("|")}> [1/2|2/2]\n       lanes-cli slowest <times file> [n]`,
  );
  process.exit(2);
}

function files(lane: string, half: string | undefined): void {
  if (!(lane in LANES) && !(lane in RERUNS)) usage();
  let list = filesOf(lane as keyof typeof LANES);
  if (half) {
    if (lane !== "fast" || (half !== "1/2" && half !== "2/2")) usage();
    const first = (f: string) => FAST_FIRST_HALF.some((p) => matches(f, p));
    list = list.filter((f) => first(f) === (half === "1/2"));
  }
  for (const f of list) console.log(compiled(f));
}

/** Lines of {"file", "ms"} (one per top-level suite), summed per file. */
function slowest(path: string, n: number): void {
  const perFile = new Map<string, number>();
  const text = existsSync(path) ? readFileSync(path, "utf8") : "";
  for (const line of text.split("\n")) {
    if (!line) continue;
    const { file, ms } = JSON.parse(line) as { file: string; ms: number };
    perFile.set(file, (perFile.get(file) ?? 0) + ms);
  }
  const ranked = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(
    `the ${ranked.length} slowest test files (wall time of their suites, in their lane):`,
  );
  for (const [file, ms] of ranked) {
    console.log(
      `${(ms / 1000).toFixed(1).padStart(8)} s  ${file.replace(/^.*?dist\/test\//, "test/").replace(/\.js$/, ".ts")}`,
    );
  }
}

const [command, arg, extra] = process.argv.slice(2);
if (command === "files" && arg) files(arg, extra);
else if (command === "slowest" && arg) slowest(arg, extra ? Number(extra) : 10);
else usage();
