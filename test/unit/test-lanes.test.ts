import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import ts from "typescript";
import { candidateLanes, filesOf, LANES, type Lane, matches, RERUNS, testFiles } from "../lanes.js";

const TEST_ROOT = fileURLToPath(new URL("../../../test/", import.meta.url));

/**
 * What a fast-lane suite may not import itself: the kits that start redis-server, PostgreSQL
 * clusters, child systems, split processes or a browser, or that run ffmpeg or openssl. The
 * shared harnesses reach Redis only through kit/lane.ts, which npm test leaves on the embedded store.
 */
const NOT_IN_THE_FAST_LANE = [
  "kit/redis-server.js",
  "kit/redis-cluster.js",
  "kit/cluster-deployment.js",
  "kit/system-process.js",
  "kit/split-system.js",
  "kit/ffmpeg.js",
  "kit/tls-certs.js",
  "browser.js",
  "helm-render.js",
  "node:child_process",
  "child_process",
];

function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(`${TEST_ROOT}${file}`, "utf8"), true, true);
  return info.importedFiles.map((i) => i.fileName);
}

describe("unit: every test file runs in exactly one lane (test/lanes.ts)", () => {
  const files = testFiles();

  it("finds the test files", () => {
    expect(files).to.include("unit/test-lanes.test.ts");
    expect(files.length).to.be.above(100);
  });

  it("gives each file one lane: some pattern matches it, and one match is the longest", () => {
    const lost = files.filter((f) => candidateLanes(f).length === 0);
    expect(lost, "files no lane names (add their folder or name to test/lanes.ts)").to.deep.equal(
      [],
    );
    const tied = files.filter((f) => {
      const [first, second] = candidateLanes(f);
      return second !== undefined && second.pattern.length === first?.pattern.length;
    });
    expect(tied, "files two lanes name equally").to.deep.equal([]);
  });

  it("puts each file in the lane lists of exactly one lane", () => {
    const counts = new Map<string, Lane[]>();
    for (const lane of Object.keys(LANES) as Lane[]) {
      for (const f of filesOf(lane, files)) counts.set(f, [...(counts.get(f) ?? []), lane]);
    }
    const wrong = files
      .filter((f) => counts.get(f)?.length !== 1)
      .map((f) => `${f}: ${counts.get(f)}`);
    expect(wrong).to.deep.equal([]);
  });

  it("names no pattern in two lanes, and each pattern matches a file", () => {
    const all = Object.values(LANES).flat();
    expect(
      all.filter((p, i) => all.indexOf(p) !== i),
      "patterns in two lanes",
    ).to.deep.equal([]);
    const stale = [...all, ...Object.values(RERUNS).flat()].filter(
      (p) => !files.some((f) => matches(f, p)),
    );
    expect(stale, "patterns that match no test file").to.deep.equal([]);
  });

  it("reruns only in-process suites (the fault suites start their own systems)", () => {
    for (const rerun of Object.keys(RERUNS) as (keyof typeof RERUNS)[]) {
      const outside = filesOf(rerun, files).filter((f) => {
        const lane = candidateLanes(f)[0]?.lane;
        return lane !== "fast" && lane !== "system";
      });
      expect(outside, rerun).to.deep.equal([]);
      expect(filesOf(rerun, files), rerun).to.not.be.empty;
    }
  });

  it("keeps the fast lane to suites that need nothing but Node: none imports a process kit", () => {
    const fast = filesOf("fast", files);
    expect(fast.length).to.be.above(50);
    const offending = fast.flatMap((f) =>
      importsOf(f)
        .filter((i) => NOT_IN_THE_FAST_LANE.some((k) => i === k || i.endsWith(`/${k}`)))
        .map((i) => `${f} imports ${i}`),
    );
    expect(
      offending,
      "move these to the system lane, or reach Redis through kit/lane.ts",
    ).to.deep.equal([]);
  });
});
