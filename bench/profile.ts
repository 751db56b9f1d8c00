/**
 * Summarizes V8 .cpuprofile files (from BENCH_CPU_PROF=1): self time per
 * function, self time per file, and inclusive time of the project's own
 * functions, so a missed target points at code rather than at a flame graph.
 * Also a CLI: node dist/bench/profile.js <file.cpuprofile>...
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { ROOT } from "./config.js";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A time range on the profile's clock (µs, CLOCK_MONOTONIC), e.g. one measurement. */
export interface TimeWindow {
  startUs: number;
  endUs: number;
}

export interface ProfileEntry {
  name: string;
  where: string;
  ms: number;
  percent: number;
}

export interface ProfileSummary {
  file: string;
  /** Set when only the samples inside one measurement were counted. */
  window?: string;
  wallMs: number;
  sampledMs: number;
  /** Time the thread was idle (waiting for I/O or work): not CPU. */
  idleMs: number;
  selfByFunction: ProfileEntry[];
  selfByFile: ProfileEntry[];
  /** Self + callees, for functions in the project's own code (dist/). */
  inclusiveProject: ProfileEntry[];
}

function where(frame: CallFrame): string {
  if (!frame.url) return "(native)";
  const url = frame.url.replace(pathToFileURL(ROOT).href, "").replace(/^file:\/\//, "");
  return `${url}:${frame.lineNumber + 1}`;
}

function fileOf(frame: CallFrame): string {
  if (!frame.url) return frame.functionName || "(native)";
  const url = frame.url.replace(pathToFileURL(ROOT).href, "");
  // Group dependencies by package, the project's own code by file.
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  return pkg ? `node_modules/${pkg[1]}` : url;
}

function top(
  map: Map<string, { name: string; where: string; ms: number }>,
  total: number,
  n: number,
): ProfileEntry[] {
  return [...map.values()]
    .sort((a, b) => b.ms - a.ms)
    .slice(0, n)
    .map((e) => ({ ...e, percent: (100 * e.ms) / total }));
}

const loaded = new Map<string, CpuProfile>();

/** Parsed once: the same file is summarized once per measurement window. */
function load(file: string): CpuProfile {
  let profile = loaded.get(file);
  if (!profile) {
    profile = JSON.parse(readFileSync(file, "utf8")) as CpuProfile;
    loaded.set(file, profile);
  }
  return profile;
}

/** Sample counts per node, from the samples inside `window` (or the node totals without one). */
function hitsPerNode(profile: CpuProfile, window?: TimeWindow): Map<number, number> {
  const hits = new Map<number, number>();
  if (!window || !profile.samples || !profile.timeDeltas) {
    for (const node of profile.nodes) if (node.hitCount) hits.set(node.id, node.hitCount);
    return hits;
  }
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    if (t < window.startUs || t > window.endUs) continue;
    const id = profile.samples[i] as number;
    hits.set(id, (hits.get(id) ?? 0) + 1);
  }
  return hits;
}

export function summarizeProfile(
  file: string,
  options: { n?: number; window?: TimeWindow & { label: string } } = {},
): ProfileSummary {
  const n = options.n ?? 25;
  const profile = load(file);
  const window = options.window;
  const wallMs = window
    ? (Math.min(window.endUs, profile.endTime) - Math.max(window.startUs, profile.startTime)) / 1000
    : (profile.endTime - profile.startTime) / 1000;
  const hits = hitsPerNode(profile, window);
  const totalHits = [...hits.values()].reduce((a, b) => a + b, 0);
  const msPerHit = totalHits > 0 ? wallMs / totalHits : 0;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));

  const selfFn = new Map<string, { name: string; where: string; ms: number }>();
  const selfFile = new Map<string, { name: string; where: string; ms: number }>();
  let idleMs = 0;
  for (const node of profile.nodes) {
    const ms = (hits.get(node.id) ?? 0) * msPerHit;
    if (ms === 0) continue;
    const frame = node.callFrame;
    if (frame.functionName === "(idle)") {
      idleMs += ms;
      continue;
    }
    const name = frame.functionName || "(anonymous)";
    const at = where(frame);
    const key = `${name}@${at}`;
    const fe = selfFn.get(key) ?? { name, where: at, ms: 0 };
    fe.ms += ms;
    selfFn.set(key, fe);
    const f = fileOf(frame);
    const fl = selfFile.get(f) ?? { name: f, where: "", ms: 0 };
    fl.ms += ms;
    selfFile.set(f, fl);
  }

  // Inclusive time: each node's subtree, credited once per function per stack (no double count in recursion).
  const subtree = new Map<number, number>();
  const subtreeMs = (id: number): number => {
    const cached = subtree.get(id);
    if (cached !== undefined) return cached;
    const node = byId.get(id);
    if (!node) return 0;
    let ms = (hits.get(node.id) ?? 0) * msPerHit;
    for (const c of node.children ?? []) ms += subtreeMs(c);
    subtree.set(id, ms);
    return ms;
  };
  const inclusive = new Map<string, { name: string; where: string; ms: number }>();
  const walk = (id: number, onStack: Set<string>) => {
    const node = byId.get(id);
    if (!node) return;
    const frame = node.callFrame;
    const project = frame.url.includes("/dist/") && !frame.url.includes("node_modules");
    const key = `${frame.functionName || "(anonymous)"}@${where(frame)}`;
    const fresh = project && !onStack.has(key);
    if (fresh) {
      const e = inclusive.get(key) ?? {
        name: frame.functionName || "(anonymous)",
        where: where(frame),
        ms: 0,
      };
      e.ms += subtreeMs(id);
      inclusive.set(key, e);
      onStack.add(key);
    }
    for (const c of node.children ?? []) walk(c, onStack);
    if (fresh) onStack.delete(key);
  };
  const root = profile.nodes[0];
  if (root) walk(root.id, new Set());

  const busy = wallMs - idleMs;
  return {
    file,
    window: window?.label,
    wallMs,
    sampledMs: totalHits * msPerHit,
    idleMs,
    selfByFunction: top(selfFn, busy, n),
    selfByFile: top(selfFile, busy, 15),
    inclusiveProject: top(inclusive, busy, n),
  };
}

export function renderProfile(s: ProfileSummary): string {
  const lines = [
    `profile ${s.file}${s.window ? `, during "${s.window}"` : ""}`,
    `  wall ${(s.wallMs / 1000).toFixed(1)} s, thread busy ${((s.wallMs - s.idleMs) / 1000).toFixed(1)} s (idle ${(s.idleMs / 1000).toFixed(1)} s); percentages are of busy time`,
    "  top self time by function:",
    ...s.selfByFunction.map(
      (e) =>
        `    ${e.ms.toFixed(0).padStart(7)} ms ${e.percent.toFixed(1).padStart(5)}%  ${e.name}  ${e.where}`,
    ),
    "  self time by file/package:",
    ...s.selfByFile.map(
      (e) =>
        `    ${e.ms.toFixed(0).padStart(7)} ms ${e.percent.toFixed(1).padStart(5)}%  ${e.name}`,
    ),
    "  inclusive time of project functions:",
    ...s.inclusiveProject.map(
      (e) =>
        `    ${e.ms.toFixed(0).padStart(7)} ms ${e.percent.toFixed(1).padStart(5)}%  ${e.name}  ${e.where}`,
    ),
  ];
  return lines.join("\n");
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const file of process.argv.slice(2)) console.log(renderProfile(summarizeProfile(file)));
}
