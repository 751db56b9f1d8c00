import type { ManagementApi } from "../api.js";
import type { BenchConfig } from "../config.js";
import type { LoadResult } from "../load.js";
import type { SystemProcess } from "../system-process.js";
import type { Row } from "../table.js";

/** What every scenario gets: configuration, shared helpers, and where to report. */
export interface BaseContext {
  config: BenchConfig;
  redisUrl: string;
  upstreamPort: number;
  upstreamPid: number;
  /** Scratch directory (catalog file); removed at the end. */
  tmpDir: string;
  catalogFile: string;
  report: Reporter;
  /** Called with the pid of every system process started (its CPU profile is looked up by pid). */
  onSystemStarted(pid: number): void;
}

/** Scenarios that run against the shared, already running system. */
export interface ScenarioContext extends BaseContext {
  system: SystemProcess;
  api: ManagementApi;
}

/** Collects table rows and, for the JSON file, every raw measurement behind them. */
export class Reporter {
  readonly rows: Row[] = [];
  readonly measurements: Record<string, unknown> = {};
  /** Scenario-specific tables, printed after the main one. */
  readonly tables: string[] = [];

  table(text: string): void {
    this.tables.push(text);
    console.error(text);
  }

  row(row: Row): void {
    this.rows.push(row);
    const v = (n: number | undefined, d = 2) => (n === undefined ? "-" : n.toFixed(d));
    console.error(
      `  ${row.scenario}: ${v(row.reqPerSec, 1)} req/s, p50 ${v(row.p50Ms)} ms, p99 ${v(row.p99Ms)} ms` +
        (row.target
          ? ` [${row.target}: ${row.pass === undefined ? "info" : row.pass ? "pass" : "MISS"}]`
          : ""),
    );
  }

  measurement(id: string, data: unknown): void {
    this.measurements[id] = data;
  }
}

/** Fails loudly when a run produced errors: a fast wrong answer must not look like a win. */
export function checkClean(id: string, r: LoadResult, allowCutOff = false): void {
  const bad = r.non2xx + r.errors + (allowCutOff ? 0 : r.timeouts);
  if (r.completed === 0 || bad > 0) {
    throw new Error(
      `${id}: ${r.completed} ok, ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts` +
        ` (statuses ${JSON.stringify(r.statuses)})${r.sampleError ? `; first error: ${r.sampleError}` : ""}`,
    );
  }
}

export function progress(message: string): void {
  // Progress goes to stderr so stdout carries only the final table.
  console.error(`[bench] ${message}`);
}
