import type { Fault } from "./chaos.js";
import type { CheckResult } from "./checks.js";
import type { CallObservation } from "./observations.js";

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** The checks, each with what it looked at and what broke it, then a few examples of each. */
export function renderChecks(results: readonly CheckResult[]): string {
  const rows = results.map((r) => [
    r.name,
    r.skipped ? "-" : String(r.checked),
    r.skipped ? "-" : String(r.failed),
    r.skipped ? `skipped: ${r.skipped}` : r.failed === 0 ? "pass" : "FAIL",
  ]);
  const examples = results.flatMap((r) =>
    r.examples.length === 0 ? [] : [`${r.name}:`, ...r.examples.map((e) => `  ${e}`)],
  );
  return [table(["check", "checked", "failed", "result"], rows), ...examples].join("\n");
}

/** Totals: requests by kind, statuses by code, the faults injected. */
export function renderTotals(calls: readonly CallObservation[], faults: readonly Fault[]): string {
  const byKind = new Map<string, number>();
  const byStatus = new Map<number, number>();
  for (const c of calls) {
    byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1);
    byStatus.set(c.status, (byStatus.get(c.status) ?? 0) + 1);
  }
  const cut = calls.filter((c) => c.kind === "speech" && c.status === 200 && !c.complete).length;
  const count = (action: Fault["action"]) => faults.filter((f) => f.action === action).length;
  const rows: string[][] = [
    ["requests", String(calls.length)],
    ...[...byKind].sort().map(([k, n]) => [`  ${k}`, String(n)]),
    ...[...byStatus]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => [`  status ${s === 0 ? "0 (no answer)" : s}`, String(n)]),
    ["  speech 200 cut short", String(cut)],
    ["kills", String(count("kill"))],
    ["freezes", String(count("freeze"))],
    ["faults whose target did not come back", String(faults.filter((f) => f.error).length)],
  ];
  const log = faults.map(
    (f) =>
      `  ${String(f.atSeconds).padStart(4)} s  ${f.action.padEnd(6)} ${f.target.padEnd(12)} ${(f.downMs / 1000).toFixed(1)} s${f.error ? `  ${f.error}` : ""}`,
  );
  const refusals = new Map<string, number>();
  for (const c of calls) {
    if (c.status !== 0 && c.status < 400) continue;
    const k = `${c.status === 0 ? "no answer" : c.status}  ${c.route}`;
    refusals.set(k, (refusals.get(k) ?? 0) + 1);
  }
  const byRoute = [...refusals].sort().map(([k, n]) => `  ${String(n).padStart(6)}  ${k}`);
  return [
    table(["total", "count"], rows),
    "refused or unanswered, by route:",
    ...byRoute,
    "faults:",
    ...log,
  ].join("\n");
}
